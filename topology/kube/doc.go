// Package kube imports a Kubernetes cluster as a topology.Tree from the JSON
// of its node list (`kubectl get nodes -o json`) and the label keys of a
// Kueue Topology, root-first, e.g.
//
//	cloud.google.com/gce-topology-block, cloud.google.com/gce-topology-subblock,
//	cloud.google.com/gce-topology-host, kubernetes.io/hostname
//	topology.k8s.aws/network-node-layer-1 … -3, kubernetes.io/hostname
//	nvidia.com/gpu.clique, kubernetes.io/hostname
//
// It is pure: the caller fetches the list and passes its bytes.
//
// # Mapping
//
// Each label key is a level, named by the key itself, so a request can name
// its level as a Kueue annotation does (tree.LevelByName(
// "cloud.google.com/gce-topology-block")); a trailing kubernetes.io/hostname
// is the Tree's implicit host level and is dropped. A domain is identified by
// its full path of label values, as in Kueue (the same subblock value under
// two blocks is two domains). Hosts are named by metadata.name — what a pod
// binding needs — and keep the list's order within their domain.
//
// Resources come from status.allocatable: GPUs from nvidia.com/gpu
// (Options.GPUResource; absent means 0, a CPU-only node), a whole number
// 0…64; CPU in milli-cores and memory in MiB, both rounded down; absent
// means topology.Unlimited. The GPU model is the nvidia.com/gpu.product
// label (Options.ModelLabel). Quantities are parsed exactly (ParseQuantity):
// "64", "63500m", "512Gi", "1e3", "500M".
//
// # Node states
//
// Nothing is dropped silently:
//
//   - A node lacking a level label (or with an empty value) has no place in
//     the hierarchy: it is left out and listed in Result.Skipped, with the
//     first label it lacks. CPU-only nodes outside the GPU fabric typically
//     land here.
//   - A cordoned node (spec.unschedulable) is in the Tree and listed in
//     Result.Health as Draining: its pods stay, new ones go elsewhere.
//   - A node whose Ready condition is False, Unknown or absent is in the
//     Tree and listed as Failed (this wins over cordoned).
//
// Hosts keep their place in the Tree whatever their state, so when a node
// recovers the caller sets it Healthy with a Delta instead of rebuilding the
// Tree. Result.HealthDelta (or Result.NewState) applies the list. Taints,
// selectors and affinity are per request: express them with
// placement.Request.Eligible.
//
// # Errors
//
// Errors wrap topology.ErrInvalid and name the node (metadata.name and
// position in items) and what is wrong: a bad quantity, a fractional or
// out-of-range GPU count, a duplicate or missing name; JSON syntax errors
// name the line.
package kube
