// Package fgd runs the protocol of the FGD paper (Weng et al., "Beware of
// Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
// Descent", USENIX ATC'23, Fig. 9–14) on a node list and a pod list in the
// openb format (bench/openb), for Blink's placement and for the paper's two
// baselines that can be reproduced exactly, Random and BestFit. It is the
// core of `blink fgd` (cmd/blink) and of BenchmarkFGD (bench); engine
// packages never import it.
//
// # Protocol
//
//  1. The cluster is the node list, empty.
//  2. The workload of a seed (Draw): pods drawn uniformly at random, with
//     replacement, from the pod list until their GPU request reaches 130% of
//     the cluster's GPUs (the pod that reaches it included), then shuffled.
//     A pod's GPU request is num_gpu × gpu_milli / 1000 GPUs: a pod of 460
//     milli asks for 0.46 GPU, a CPU-only pod for none.
//  3. The pods are placed one at a time in that order (Run); a pod that fits
//     nowhere is skipped, and no pod ever leaves.
//  4. The arrived GPU request after pod i is the GPU request of pods 1…i,
//     placed or skipped; the GPU allocation ratio is the GPU request of the
//     placed pods (fractions counted as fractions) over the cluster's GPUs.
//     Curve[k] is the allocation ratio right after the pod with which the
//     arrived request first reaches k% of capacity, k = 0…130 (several k
//     share a value when one large pod passes them).
//  5. Seeds 42–51; curves are averaged over seeds (Measure). Every policy of
//     a seed places the same workload; a policy's own random choices come
//     from a separate stream of the same seed.
//
// Pods honour cpu_milli, memory_mib, num_gpu and gpu_milli (1000: whole
// GPUs; below: a share of one GPU, several of which may share a GPU up to
// 1000 milli) and gpu_spec (acceptable models).
//
// # Policies
//
// NewPlacer documents them. blink is placement.Solver.Place with the default
// policy on a topology.State (the tree is openb.Flat unless asked), given
// the workload's profile (openb.Profile: every pod shape of the pod list with its
// number of pods — the same information FGD takes as its typical pods), so
// one-pod requests go to the host of least capacity loss
// (placement.Profile); blink-bestfit is the same without the profile. bestfit
// and random follow the paper's simulator (its BestFitScore and RandomScore
// plugins and its GPU choice inside a node) on their own per-node model, a
// list of free milli per GPU; their runs on openb_pod_list_default land
// within 0.3 points of the paper's 92.86% and 86.30% at 100% arrived, which
// is the check that this protocol is the paper's. The paper's simulator
// differs in details that should not move the mean: it keeps the whole pod
// list and tops it up with random draws, averages the allocation over
// arrived ratios that round to k, and breaks BestFit's ties (its scores are
// integers 0…100) at random.
package fgd
