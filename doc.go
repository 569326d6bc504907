// Package blink is the scheduling engine an embedding scheduler drives: a
// queue of jobs, a cycle that returns decisions, and reports of what
// happened, over the topology State (package topology) with the gang solver
// (package placement). Like etcd raft's Ready/Advance, the library decides
// and the embedder acts and confirms: the engine does no I/O, starts no
// goroutine and reads no clock — time is an input (now, in the caller's
// units), and the same sequence of calls gives the same decisions.
//
// # Jobs
//
// A job (JobSpec) is a gang of one or more pod sets (placement.PodSet: pod
// shape, slices), placed together or not at all, with optional required and
// preferred topology levels, exclusivity and GPU models; optionally elastic
// (MinPods: placed at the largest size that fits now, at least its minimum);
// a priority, a preemptible flag and an optional expected run time.
//
// A job's Status: Pending (queued) → Binding (a cycle bound it; the State
// already holds it, assumed) → Running (Bound) → gone (Finished, Cancel).
// Evicted returns a placed job to Pending; a fault makes a running job
// Repairing until its replacements are Bound; a defragmentation move makes
// it Moving until Moved; a preemption makes it Evicting until Evicted.
//
// # The embedder's loop
//
//  1. Build a topology.State (empty, or holding the jobs already running,
//     which are adopted) and New(state, Config{...}). Config says the
//     timeouts, the spare policy and the per-cycle caps; preemption and
//     defragmentation use packages preempt and defrag unless other planners
//     are plugged in (Preempter, Defragmenter).
//  2. Submit(now, spec) each new job; Cancel(id) one the user deletes.
//  3. Call Cycle(now) — on a timer, or after events. It returns Decisions:
//     Repairs (replacement pods for faulted jobs, or jobs returned to the
//     queue), Preemptions (victims to evict for a blocked job, whose GPUs are
//     now nominated for it), Moves (jobs to migrate), Binds (jobs to start:
//     pods on hosts and GPUs), Expired (unconfirmed actions that timed out)
//     and Pending (for each pending job that got nothing, a Reason).
//  4. Act on the decisions, in that order: stop the faulted pods and start
//     the replacements (after evicting the repair's victims); evict victims;
//     migrate moved jobs; bind. The engine has already recorded binds,
//     repairs and moves in the State as assumed, so the next cycle never
//     hands the same GPUs out again.
//  5. Report what happened, as it happens: Bound (a bind or repair
//     succeeded), BindFailed (it did not: the job is pending again), Moved,
//     Evicted, Finished; and hardware events: HostFailed, GPUFailed,
//     DomainFailed (a switch or a rack: its jobs are rescheduled), Drain,
//     Recovered. A report that does not match the engine's state — an
//     unknown job, finishing a job that never started, a host that already
//     failed — returns an error wrapping ErrUnknown or ErrState and changes
//     nothing.
//  6. Repeat from 2. Binds, repairs, evictions and moves that are never
//     confirmed expire after the Config's timeouts, measured in the now of
//     later calls; so do nominations.
//
// # A cycle
//
// Pending jobs are taken in order of priority, then submit time. A job that
// cannot fit fails fast: from the State's aggregates inside placement, or
// from a per-cycle memo of shapes that already failed. The top blocked job
// gets a reservation: the GPUs it will use are nominated for it with the time
// they are expected to be free, and lower jobs backfill around them — or on
// them, when their expected end comes before that time. A blocked job with
// preemptible lower-priority work to take (the State's PreemptibleBelow
// aggregates tell) may get a preemption, and one that a few moves would
// place, a defragmentation plan (moves are tried first); both are capped per
// cycle, and the nominations they create are sticky, so a later cycle does
// not waste evictions already under way by choosing another domain.
//
// # Spares and faults
//
// A SparePolicy keeps N healthy hosts per domain of a level as spares that
// only preemptible (filler) jobs may use: non-preemptible requests carry the
// engine's placement.Restriction of the spares, kept incrementally, so they
// are placed from exact capacities at full speed. A fault under a running
// gang is repaired inside the domain the gang required: a spare first
// (evicting its filler), else free GPUs there, else lower-priority work
// there; only when the domain has no way left does the job go back to the
// queue. SparePool sizes a pool from a failure probability.
//
// # Determinism and cost
//
// No map is ever ranged over; ties break by index; the same calls give the
// same decisions (tests run every random loop twice). A cycle costs O(pending
// jobs) plus the placements it makes; reports cost O(levels) per host and
// O(pods) per job they touch. Check verifies the engine's invariants and the
// State's; tests call it after every step.
package blink
