package openb

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// varyList is a pod list of 400 pods: 200 of one whole GPU, 100 fractions
// (250 or 600 milli), 20 of 4 and 8 GPUs, 80 CPU-only.
func varyList() ([]Pod, []Node) {
	var pods []Pod
	add := func(n, gpus, milli int) {
		for range n {
			pods = append(pods, Pod{Name: fmt.Sprintf("p%d", len(pods)), CPUMilli: int64(1000 * (1 + gpus)),
				MemoryMiB: 4096, NumGPU: gpus, GPUMilli: milli})
		}
	}
	add(200, 1, 1000)
	add(50, 1, 250)
	add(50, 1, 600)
	add(10, 4, 1000)
	add(10, 8, 1000)
	for i := range 80 {
		pods = append(pods, Pod{Name: fmt.Sprintf("c%d", i), CPUMilli: 8000, MemoryMiB: 16384})
	}
	nodes := []Node{{Name: "a", GPUs: 8, Model: "G2"}, {Name: "b", GPUs: 2, Model: "T4"},
		{Name: "c", GPUs: 0}, {Name: "d", GPUs: 8, Model: "G2"}}
	return pods, nodes
}

func TestParseVariant(t *testing.T) {
	for s, want := range map[string]Variant{"": {}, "gpushare=100": {"gpushare", 100}, "multigpu=0": {"multigpu", 0},
		"gpuspec=33": {"gpuspec", 33}, "cpu=250": {"cpu", 250}} {
		v, err := ParseVariant(s)
		require.NoError(t, err, s)
		require.Equal(t, want, v, s)
	}
	for _, s := range []string{"gpushare", "gpushare=", "gpushare=101", "cpu=1001", "gpuspec=-1", "frac=10", "=5", "cpu=1e2"} {
		_, err := ParseVariant(s)
		require.ErrorIs(t, err, ErrVariant, s)
	}
}

func TestVaryKinds(t *testing.T) {
	pods, nodes := varyList()
	orig := slices.Clone(pods)
	count := func(ps []Pod, f func(p *Pod) bool) int {
		n := 0
		for i := range ps {
			if f(&ps[i]) {
				n++
			}
		}
		return n
	}
	vary := func(s string) []Pod {
		v, err := ParseVariant(s)
		require.NoError(t, err)
		out, err := Vary(pods, nodes, v, 7)
		require.NoError(t, err, s)
		again, err := Vary(pods, nodes, v, 7)
		require.NoError(t, err)
		require.Equal(t, out, again, "%s: same seed, same list", s)
		require.Equal(t, orig, pods, "%s: the input list changed", s)
		return out
	}

	share := vary("gpushare=100")
	require.Zero(t, count(share, oneWhole), "gpushare=100 leaves a whole one-GPU pod")
	require.Equal(t, 300, count(share, func(p *Pod) bool { return p.GPUMilli == 250 || p.GPUMilli == 600 }))
	half := count(vary("gpushare=50"), oneWhole)
	require.InDelta(t, 100, half, 30, "gpushare=50 turned %d of 200 whole pods", 200-half)

	multi := vary("multigpu=50")
	var total, held, last int64
	for i := range multi {
		total += multi[i].MilliGPU()
		if multi[i].NumGPU > 1 {
			held += multi[i].MilliGPU()
			last = max(last, multi[i].MilliGPU())
			require.Contains(t, []int64{5000, 9000}, multi[i].CPUMilli, "a multi-GPU pod keeps its CPU")
		}
	}
	require.GreaterOrEqual(t, held*100, total*50, "multigpu=50: %d of %d milli-GPU", held, total)
	require.Less(t, held*100, total*50+last*100, "multigpu=50 went on past the share by more than a pod")
	require.Len(t, multi, len(pods))

	spec := vary("gpuspec=100")
	for i := range spec {
		if spec[i].NumGPU > 0 {
			require.Len(t, spec[i].Models, 1)
			require.Contains(t, []string{"G2", "T4"}, spec[i].Models[0])
		} else {
			require.Empty(t, spec[i].Models)
		}
	}
	require.Greater(t, count(spec, func(p *Pod) bool { return len(p.Models) == 1 && p.Models[0] == "G2" }),
		3*count(spec, func(p *Pod) bool { return len(p.Models) == 1 && p.Models[0] == "T4" }), "models by their GPUs: 16 G2 to 2 T4")

	cpuOnly := func(p *Pod) bool { return p.NumGPU == 0 }
	more := vary("cpu=250")
	require.Equal(t, 200, count(more, cpuOnly))
	require.Equal(t, len(pods)+120, len(more))
	names := map[string]bool{}
	for i := range more {
		require.False(t, names[more[i].Name], "name %s twice", more[i].Name)
		names[more[i].Name] = true
	}
	fewer := vary("cpu=25")
	require.Equal(t, 20, count(fewer, cpuOnly))
	require.Equal(t, len(pods)-60, len(fewer))
	require.Equal(t, pods, vary(""))
}

func TestVaryNothingToDrawFrom(t *testing.T) {
	whole := []Pod{{Name: "a", NumGPU: 1, GPUMilli: 1000}}
	for _, s := range []string{"gpushare=10", "multigpu=10", "cpu=200"} {
		v, _ := ParseVariant(s)
		_, err := Vary(whole, nil, v, 1)
		require.ErrorIs(t, err, ErrVariant, s)
	}
	v, _ := ParseVariant("gpuspec=10")
	_, err := Vary(whole, []Node{{Name: "c"}}, v, 1)
	require.ErrorIs(t, err, ErrVariant)
}
