// Package openb reads the node and pod lists of Alibaba's GPU cluster trace
// (cluster-trace-gpu-v2023, the "openb" trace of the FGD paper, USENIX ATC'23)
// and turns them into what Blink's engine packages take: a topology.Tree of
// the nodes and, per pod, a one-pod placement.Request. It is shared by the
// `blink fgd` and `blink replay` commands (bench/fgd, bench/replay); engine
// packages never import it.
//
// # Formats
//
// Both lists are CSV files with a header row; columns are found by name, in
// any order, and unknown columns are ignored.
//
//	node list: sn, cpu_milli, memory_mib, gpu, model
//	pod list:  name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec,
//	           qos, pod_phase, creation_time, deletion_time, scheduled_time
//
// A pod asks for num_gpu GPUs of gpu_milli milli-GPU each: gpu_milli 1000 is
// whole GPUs, 1…999 a fraction of one GPU (num_gpu must then be 1), and
// num_gpu 0 a CPU-only pod (gpu_milli is then ignored). Its GPU request is
// num_gpu × gpu_milli milli-GPU (Pod.MilliGPU), so a pod of 460 milli asks
// for 0.46 GPU. gpu_spec, when set, lists the GPU models the pod accepts,
// separated by "|"; models no node has are dropped, and a GPU pod none of
// whose models exists fits nowhere (Shape.NoModel). Times are seconds;
// deletion_time and scheduled_time may be empty (Pod.HasDeletion,
// Pod.HasScheduled).
//
// # Cluster
//
// NewCluster builds the Tree with topology.BuildHosts, each node a host with
// its GPU count, model, CPU and memory. The trace has no topology above the
// node, so there are two trees: Flat (no domain levels: every node under the
// root, in file order) and Pool (one level grouping the nodes of one
// instance type — GPU model, GPU count, CPU, memory — as a Kubernetes node
// pool would). Placement decides level by level, so the tree changes where
// Blink puts pods; the baselines of bench/fgd ignore it.
package openb
