// Package replay replays a pod list by its creation and deletion times
// through Blink's placement (placement.Solver with the default policy and the
// pod list's workload profile, openb.Profile, as in blink fgd; one one-pod
// request per pod, applied with State.Apply) and measures what a
// cluster operator watches: time-weighted GPU allocation, pods waiting,
// fragmentation and decision latency. It is the core of `blink replay`
// (cmd/blink); engine packages never import it.
//
// # Events
//
// Pod i of the list (job id i, named by its name column) arrives at its
// creation_time and leaves at its deletion_time (a pod without one never
// leaves). Events are handled in time order; at one instant t:
//
//  1. Departures of pods that arrived before t: a running pod frees its
//     resources ("leave"); a pod still waiting leaves the queue unserved
//     ("give-up").
//  2. If anything was freed, the queue is retried ("retry"): every waiting
//     pod, oldest first, is tried once against the cluster as the pods
//     placed before it in this pass left it, and placed if it fits. A pod
//     that still does not fit keeps its place in the queue. (Placements only
//     shrink free capacity, so a shape that failed earlier in the pass fails
//     again: it is not re-tried.)
//  3. Arrivals at t, in list order ("arrive"): each is tried at once and
//     placed ("place") or appended to the queue ("wait", with the reason).
//     The queued pods ahead of it were just tried against the same state, so
//     trying the newcomer first does not jump a pod that could have run.
//  4. Departures of pods that arrived at t (deletion = creation), then a
//     retry as in 2.
//
// So the queue is FIFO with backfill: a pod that fits is never held back by
// an older pod that does not.
//
// The openb trace loads its cluster lightly (about 1% of the GPUs at its
// peak): Compress divides arrival times by a factor, keeping each pod's
// duration, to replay the same pods at a higher load (`blink replay
// -compress F`).
//
// # Metrics
//
//   - GPU allocation: milli-GPU held by running pods over the cluster's
//     milli-GPU, time-weighted over [first arrival, last arrival] (after the
//     last arrival the cluster only drains), and its peak.
//   - Waiting: pods in the queue, time-weighted mean and maximum; and, per
//     pod that waited and then ran, its wait.
//   - Fragmentation: the share of free milli-GPU that pods of the trace's
//     most common GPU request R (the most frequent num_gpu × gpu_milli among
//     its GPU pods; CPU and memory not counted) could not use. On each host,
//     the free milli-GPU minus what as many R pods as fit would take: for R
//     of g whole GPUs, ⌊unused GPUs / g⌋·g GPUs are usable; for R of m
//     milli, Σ over GPUs of ⌊free milli / m⌋·m. For R = one whole GPU it is
//     the free milli on partly used GPUs. Time-weighted over the run.
//   - Decision latency: the wall time of each placement.Solver.Place call
//     (arrivals and retries, fits or not), p50, p99 and max.
//
// # Log
//
// With a log writer, every event and decision is one JSON object per line,
// in order, with the keys t (trace seconds), kind, job, and per kind:
//
//	arrive   request {gpus, milli, cpuMilli, memoryMiB, models}
//	place    pods [{host, gpus (GPU indices on the host), milli, cpuMilli, memoryMiB}], waited (s)
//	wait     code (the placement.ReasonCode number), reason (why it does not fit
//	         now, in words), waiting (queue length after it)
//	retry    waiting (queue length before the pass)
//	leave    (the pod's resources are freed)
//	give-up  waited (s): it left at its deletion time without running
//
// A "place" names every resource the pod takes, so anyone can rebuild the
// cluster's state at each line from the node list and check that each
// placement fits, that each "wait" and each pod still waiting after a
// "retry" pass does not, and that the queue order holds (the package's
// tests do exactly this with an independent model).
package replay
