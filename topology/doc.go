// Package topology owns the cluster model every Blink planner reads: the
// immutable Tree and the mutable State, and the only way the State changes,
// State.Apply(Delta).
//
// # Tree
//
// Domain levels are named root-first (e.g. block, su, rack) below an implicit
// root (level 0, one domain) and above the implicit host level. Domains of a
// level are numbered depth-first in order of first appearance in the builder's
// input, so every domain covers a contiguous interval of child domains, hosts
// (Tree.Hosts) and GPUs (Tree.GPUs): "the GPUs of rack r" is an interval, and
// scans over bitsets replace pointer chasing. The Tree is struct-of-arrays:
// one []int32 per field, names interned to dense ids at build time. Builders:
// BuildShape (levels × fan-outs × GPUs per host) and BuildHosts (a host list
// with one label per level, as Kubernetes node labels under a Kueue Topology).
//
// # State
//
// Primary data: per GPU its free milli-GPU (FullGPU when unused), failed and
// nominated bits; per host its health, exclusivity, free CPU and memory,
// generation, and pods; the jobs (dense caller-chosen JobIDs) with their pods
// in rank order; the nominations. Derived data, kept incrementally in
// O(levels) per host touched: the free-mask (a bits-and-blooms BitSet: a GPU
// is free when unused, healthy, not nominated, on a healthy host no job holds
// exclusively), per-host free counts and idleness, and per domain: free GPUs
// (per model where models mix), healthy capacity, idle hosts, a histogram of
// hosts by free GPUs (PodCapacity reads "how many g-GPU pods fit" from it),
// free milli on shared GPUs and those GPUs by free-milli bucket (PartialGPUs),
// GPUs held by preemptible jobs per priority bucket,
// and per level a bitset of entirely idle domains. Check recomputes all
// derived data from the primary data and reports the first difference.
//
// # Deltas
//
// A Delta is an ordered list of operations (add, remove or move a job, or
// re-place some of its pods; nominate, cancel, expire; set the health of a
// GPU, host or domain), plus
// optional per-host generation guards. Apply validates each operation against
// the State as the previous operations left it; if anything fails it returns
// an error wrapping ErrInvalid (malformed input) or ErrStale (a precondition
// no longer holds) and restores the State exactly, from an undo journal of
// every write. While a journaled Delta runs, each host's derived data is
// brought up to date once, at its end (the operations check primary data
// only). Staleness is per host (generations) and per resource, never a
// global version, so independent plans made in one cycle can all be applied.
//
// Beside the job table, a compact job view (JobPriorities, JobPodCounts,
// JobMilliGPUs, JobSizes, PreemptibleJobWords) gives planners flat per-job-id
// arrays to scan, a histogram of the movable preemptible jobs' sizes bounds
// what any k moves can free (MovableGPUsBound), one of the preemptible jobs'
// sizes per priority bucket how few evictions can free g GPUs
// (PreemptibleCover), an index of the preemptible jobs by priority bucket and
// size class lists the large ones of low priority without a scan
// (PreemptibleSizeWords, LeastPreemptiblePriority), and JobsWithEnd counts the
// jobs with an expected end. Per domain, ExclusiveGPUs counts the GPUs of
// hosts held exclusively.
//
// # Nominations
//
// A nomination reserves GPUs for a job (a preemptor waiting for its victims to
// terminate). Nominated GPUs leave the free aggregates, whether free now or
// still held; only the nominee, a strictly higher priority, or a job expected
// to end at or before the nomination's ready time may take them
// (AppendAdmitted lists, by host, those a given job may take). Adding the
// nominee's job releases its nomination; ExpireNominations(now) drops the
// expired ones (time is the caller's abstract value; the package reads no
// clock).
package topology
