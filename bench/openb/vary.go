package openb

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// A Variant changes a pod list the way the FGD paper's workload families
// (its Figs. 11–14) change Alibaba's default list: more of one kind of pod,
// the rest of the list as it is. Alibaba publishes the paper's own lists
// beside the default one (openb_pod_list_gpushare40.csv, …multigpu50,
// …gpuspec33, …cpu250); a Variant builds lists of the same families from
// whatever list it is given, to measure a policy on workloads it was not
// tuned on.
//
//   - gpushare=P: P% of the pods of one whole GPU ask for a fraction of it
//     instead, drawn from the list's fractional pods.
//   - multigpu=P: pods of one whole GPU, in random order, take the shape
//     (GPUs, CPU, memory) of a multi-GPU pod drawn from the list, until
//     multi-GPU pods ask for P% of the list's GPUs (a list there already is
//     left as it is).
//   - gpuspec=P: P% of the pods that ask for GPUs accept one GPU model only,
//     drawn in proportion to the cluster's GPUs of each model.
//   - cpu=P: the CPU-only pods number P% of the list's: drawn from them and
//     added at random places (P > 100) or removed at random (P < 100).
type Variant struct {
	Kind    string // "" for none
	Percent int
}

// VariantKinds are the kinds ParseVariant knows.
var VariantKinds = []string{"gpushare", "multigpu", "gpuspec", "cpu"}

// ErrVariant: a variant that is malformed or that the list cannot make.
var ErrVariant = errors.New("openb: variant")

// ParseVariant parses "KIND=P" (e.g. "gpushare=100"); "" is no variant.
func ParseVariant(s string) (Variant, error) {
	if s == "" {
		return Variant{}, nil
	}
	kind, pct, ok := strings.Cut(s, "=")
	p, err := strconv.Atoi(pct)
	most := 100
	if kind == "cpu" {
		most = 1000
	}
	switch {
	case !ok || !slices.Contains(VariantKinds, kind):
		return Variant{}, fmt.Errorf("%w %q: want KIND=PERCENT, KIND one of %s", ErrVariant, s, strings.Join(VariantKinds, ", "))
	case err != nil || p < 0 || p > most:
		return Variant{}, fmt.Errorf("%w %q: percent %q, want an integer 0…%d", ErrVariant, s, pct, most)
	}
	return Variant{Kind: kind, Percent: p}, nil
}

func (v Variant) String() string {
	if v.Kind == "" {
		return "none"
	}
	return fmt.Sprintf("%s=%d", v.Kind, v.Percent)
}

// Vary returns a copy of pods changed to variant v (pods itself unchanged),
// drawing at random from seed: the same inputs give the same list. nodes
// give the models' shares (gpuspec). Added pods are named after the pod they
// copy with a suffix "-vN", so names stay distinct.
func Vary(pods []Pod, nodes []Node, v Variant, seed uint64) ([]Pod, error) {
	out := slices.Clone(pods)
	rng := rand.New(rand.NewPCG(seed, 0x76617279)) // "vary"
	switch v.Kind {
	case "":
		return out, nil
	case "gpushare":
		return varyShare(out, v.Percent, rng)
	case "multigpu":
		return varyMulti(out, v.Percent, rng)
	case "gpuspec":
		return varySpec(out, nodes, v.Percent, rng)
	case "cpu":
		return varyCPU(out, v.Percent, rng)
	}
	return nil, fmt.Errorf("%w %q: unknown kind", ErrVariant, v.Kind)
}

// oneWhole reports whether p asks for one whole GPU.
func oneWhole(p *Pod) bool { return p.NumGPU == 1 && p.GPUMilli == 1000 }

func varyShare(pods []Pod, pct int, rng *rand.Rand) ([]Pod, error) {
	var fracs []int
	for i := range pods {
		if pods[i].NumGPU == 1 && pods[i].GPUMilli < 1000 {
			fracs = append(fracs, pods[i].GPUMilli)
		}
	}
	if len(fracs) == 0 {
		return nil, fmt.Errorf("%w gpushare: the list has no fractional pod to draw from", ErrVariant)
	}
	for i := range pods {
		if oneWhole(&pods[i]) && rng.IntN(100) < pct {
			pods[i].GPUMilli = fracs[rng.IntN(len(fracs))]
		}
	}
	return pods, nil
}

func varyMulti(pods []Pod, pct int, rng *rand.Rand) ([]Pod, error) {
	var multi []Pod
	var total, held int64
	for i := range pods {
		total += pods[i].MilliGPU()
		if pods[i].NumGPU > 1 {
			multi = append(multi, pods[i])
			held += pods[i].MilliGPU()
		}
	}
	if len(multi) == 0 {
		return nil, fmt.Errorf("%w multigpu: the list has no multi-GPU pod to draw from", ErrVariant)
	}
	for _, i := range rng.Perm(len(pods)) {
		if held*100 >= total*int64(pct) {
			break
		}
		if !oneWhole(&pods[i]) {
			continue
		}
		m := &multi[rng.IntN(len(multi))]
		total += m.MilliGPU() - pods[i].MilliGPU()
		held += m.MilliGPU()
		p := &pods[i]
		p.NumGPU, p.GPUMilli, p.CPUMilli, p.MemoryMiB = m.NumGPU, m.GPUMilli, m.CPUMilli, m.MemoryMiB
	}
	return pods, nil
}

func varySpec(pods []Pod, nodes []Node, pct int, rng *rand.Rand) ([]Pod, error) {
	var models []string
	var gpus []int
	sum := 0
	for i := range nodes {
		if nodes[i].GPUs == 0 {
			continue
		}
		k := slices.Index(models, nodes[i].Model)
		if k < 0 {
			k = len(models)
			models, gpus = append(models, nodes[i].Model), append(gpus, 0)
		}
		gpus[k] += nodes[i].GPUs
		sum += nodes[i].GPUs
	}
	if sum == 0 {
		return nil, fmt.Errorf("%w gpuspec: the nodes have no GPUs", ErrVariant)
	}
	for i := range pods {
		if pods[i].NumGPU == 0 || rng.IntN(100) >= pct {
			continue
		}
		x := rng.IntN(sum)
		k := 0
		for x >= gpus[k] {
			x -= gpus[k]
			k++
		}
		pods[i].Models = []string{models[k]}
	}
	return pods, nil
}

func varyCPU(pods []Pod, pct int, rng *rand.Rand) ([]Pod, error) {
	var cpu []int
	for i := range pods {
		if pods[i].NumGPU == 0 {
			cpu = append(cpu, i)
		}
	}
	if len(cpu) == 0 && pct > 100 {
		return nil, fmt.Errorf("%w cpu: the list has no CPU-only pod to draw from", ErrVariant)
	}
	want := len(cpu) * pct / 100
	if want <= len(cpu) {
		drop := make([]bool, len(pods))
		for _, k := range rng.Perm(len(cpu))[:len(cpu)-want] {
			drop[cpu[k]] = true
		}
		kept := pods[:0]
		for i := range pods {
			if !drop[i] {
				kept = append(kept, pods[i])
			}
		}
		return kept, nil
	}
	src := slices.Clone(pods)
	for n := len(cpu); n < want; n++ {
		p := src[cpu[rng.IntN(len(cpu))]]
		p.Name = fmt.Sprintf("%s-v%d", p.Name, n)
		pods = slices.Insert(pods, rng.IntN(len(pods)+1), p)
	}
	return pods, nil
}
