// Package whatif answers scenario files: a cluster (levels, hosts, failed and
// draining hosts, running jobs) and a question about it, in the public JSON
// format of `blink whatif`, answered by the engine packages. It is the shared
// core of the command (cmd/blink) and of its golden tests; engine packages
// never import it.
//
// # Scenario
//
// A scenario is one JSON object (keys are exact and case-sensitive; unknown
// keys, duplicate keys and trailing data are errors):
//
//	{"version": 1,
//	 "levels": ["block", "rack"],
//	 "hosts": [{"name": "h0", "path": ["b0", "r0"], "gpus": 8, "model": "H100",
//	            "cpuMilli": 64000, "memoryMiB": 262144}],
//	 "failed": ["h3"], "draining": ["h4"],
//	 "jobs": [{"name": "j1", "priority": 10, "preemptible": true, "movable": true,
//	           "requiredLevel": "rack",
//	           "pods": [{"host": "h0", "gpus": [0, 1], "milli": 0, "cpuMilli": 0, "memoryMiB": 0}]}],
//	 "request": {"name": "big", "pods": 2, "gpus": 8, "milli": 0, "cpuMilli": 0, "memoryMiB": 0,
//	             "models": [], "requiredLevel": "rack", "preferredLevel": "", "sliceSize": 0,
//	             "sliceLevel": "", "exclusive": false, "priority": 100, "preemptible": false},
//	 "mode": "place",
//	 "maxMoves": 8}
//
// Levels name the domain levels above hosts, root-first; "host" is the
// implicit level below them (a request may require it). A host's path has one
// label per level; gpus (0…64) is required, model, cpuMilli and memoryMiB are
// optional (a missing cpuMilli or memoryMiB means no limit). Version, if
// given, is 1. Mode is "place", "preempt" or "defrag". maxMoves (default 8,
// defrag only, ≥ 0) bounds a defrag plan: running jobs that are movable and
// preemptible may move, each once, keeping their requiredLevel, pod shapes
// and GPU model, to make room for the request (package defrag).
//
// Running jobs: names unique and non-empty; priority defaults to 0,
// preemptible to false, movable to true; requiredLevel is the job's own
// constraint, which its pods must already keep (all of them inside one domain
// of that level). A running pod lists its host's GPU indices: a whole-GPU pod
// has milli 0, a fractional pod one GPU and milli 1…999; a pod with no GPUs
// is CPU-only. Fractional pods of any jobs share a GPU up to 1000 milli; a GPU
// used whole is used by one pod only. The pods of a host fit its CPU and
// memory. A host is failed, draining, or neither. Job i gets topology.JobID i;
// the request gets the next id.
//
// The request is one pod set: pods identical pods of gpus whole GPUs, or a
// fraction (gpus 1, milli 1…999), or no GPU at all (gpus 0, milli 0: a
// CPU-only pod, which any host may take; models still filter it). Omitted
// numbers are 0 and omitted or empty strings are absent. models lists
// acceptable GPU models by name (empty: any); a model no host has is not an
// error, and a request none of whose models exists is a no-fit. sliceSize
// and sliceLevel come both or neither. Its name, if any, is distinct from the
// running jobs'.
//
// # Answer
//
//	{"fits": true,
//	 "pods": [{"host": "h1", "gpus": [0, 1, 2, 3, 4, 5, 6, 7], "milli": 0}],
//	 "victims": [],
//	 "moves": [],
//	 "reason": "", "exact": true}
//
// Every key is always present, lists as [] (never null). Pods are in rank
// order, gpus are host GPU indices. When fits is false, pods, victims and
// moves are [] and reason says why. exact says whether the answer is proven
// (always true for place; for preempt, that no cheaper victim set exists).
// Victims (preempt) are job names sorted byte-wise, and the pods are where
// the request goes once they are gone (none when it fits as it is);
// a move (defrag) is {"job", "pods"}: all of the job's pods after the move,
// in its input order; moves are in execution order, the fewest that make
// room (exact: proven the fewest), and the pods are where the request goes
// once they are done.
//
// # Errors
//
// A scenario that breaks a rule above, a malformed request (zero pods, a
// fraction with gpus ≠ 1, a slice size that does not divide the pods, …) and
// a mode not implemented yet are errors: Run returns an error wrapping
// ErrInvalid or ErrNotImplemented, and Command prints it on one line of
// stderr and exits 2. A well-formed request the cluster cannot serve is an
// answer (fits false), exit 0. Exit 1 means the answer could not be written,
// or the engine failed (a plan that does not apply to the State it was made
// on).
package whatif
