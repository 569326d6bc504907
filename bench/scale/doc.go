// Package scale is the synthetic scale run behind `blink scale` (cmd/blink)
// and BenchmarkScale (package bench): a seeded stream of job arrivals and
// departures played against a blink.Engine over a cluster filled to a load,
// measuring the latency of every decision the engine makes, by kind. Engine
// packages never import it.
//
// # The cluster
//
// bench.Loaded(shape, gpus, load, bench.DefaultSeed) — the same filled
// cluster every engine benchmark uses at that key — is cloned and adopted by
// blink.New with bench.EngineConfig (one preemption and one defragmentation
// attempt per cycle, one reservation, no spares): its fill jobs are running.
//
// # Events
//
// Event i (i = 0 … Events-1) happens at now = i+1. It is an arrival with
// probability 0.9 while the cluster's load (allocated whole GPUs over
// healthy ones) is below the target, 0.1 once at or above it, else a
// departure; so the load stays near the target. An arrival Submits a job
// drawn from Mix (openb-like single pods, rare gangs of 72 … 200k GPUs); a
// departure reports Finished for a running job drawn uniformly. Before the
// event, jobs pending for Patience events or more are Cancelled (users give
// up), which bounds the queue. Every draw comes from one PCG seeded by Seed,
// so a seed fixes the run: the same seed gives the same decisions (Digest).
//
// # The controller
//
// After each event, Cycle(now) runs, timed alone, and its Decisions are
// confirmed at once, in the order they prescribe: repairs (Bound, victims
// Evicted), preemption victims (Evicted: they are pending again), moves
// (Moved), binds (Bound). Nothing is left to expire.
//
// # Kinds
//
// Each cycle counts under one Kind, the first that applies: preempt (it
// evicted victims), defrag (it moved jobs), place (it bound something),
// reject (an arrival's cycle that bound nothing: the new job got nothing),
// idle (a departure's cycle that decided nothing). Result.Percentile gives
// each kind's latency percentiles; Summarize adds ratios to the floor F
// (bench.FloorNs at the run's size, measured in the same process), which
// hold across machines where microseconds do not.
package scale
