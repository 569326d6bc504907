package topology

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every builder error wraps ErrInvalid and names what is wrong: the level, the
// host (position and name), the value.

func TestBuildShapeErrors(t *testing.T) {
	ok := Shape{Levels: []string{"block", "rack"}, FanOut: []int{2, 3, 4}, GPUsPerHost: 8}
	with := func(f func(*Shape)) Shape {
		sh := ok
		sh.Levels = append([]string(nil), ok.Levels...)
		sh.FanOut = append([]int(nil), ok.FanOut...)
		f(&sh)
		return sh
	}
	many := make([]string, 61)
	for i := range many {
		many[i] = "l" + strconv.Itoa(i)
	}
	for _, c := range []struct {
		name  string
		shape Shape
		want  []string // substrings of the error
	}{
		{"empty level name", with(func(s *Shape) { s.Levels[1] = "" }), []string{"level 1", "empty name"}},
		{"duplicate level", with(func(s *Shape) { s.Levels[1] = "block" }), []string{"level 1", "duplicate", `"block"`}},
		{"level named host", with(func(s *Shape) { s.Levels[0] = "host" }), []string{"level 0", `"host"`, "implicit"}},
		{"slash in level name", with(func(s *Shape) { s.Levels[1] = "ra/ck" }), []string{"level 1", `"ra/ck"`, `"/"`}},
		{"too many levels", Shape{Levels: many, FanOut: make([]int, 62)}, []string{"61 levels", "at most 60"}},
		{"too few fan-outs", with(func(s *Shape) { s.FanOut = s.FanOut[:2] }), []string{"2 levels", "2 fan-outs", "want 3"}},
		{"too many fan-outs", with(func(s *Shape) { s.FanOut = append(s.FanOut, 1) }), []string{"4 fan-outs", "want 3"}},
		{"zero fan-out", with(func(s *Shape) { s.FanOut[1] = 0 }), []string{"level rack", "is 0"}},
		{"negative fan-out", with(func(s *Shape) { s.FanOut[0] = -2 }), []string{"level block", "is -2"}},
		{"zero hosts per domain", with(func(s *Shape) { s.FanOut[2] = 0 }), []string{"hosts per domain", "is 0"}},
		{"too many hosts", with(func(s *Shape) { s.FanOut = []int{1 << 10, 1 << 10, 1 << 10} }), []string{"more than 268435456 hosts"}},
		{"fan-out overflowing int64", with(func(s *Shape) { s.FanOut = []int{4, 1 << 62, 1} }), []string{"more than 268435456 hosts"}},
		{"too many GPUs", with(func(s *Shape) { s.FanOut = []int{1 << 10, 1 << 10, 1 << 6}; s.GPUsPerHost = 64 }), []string{"GPUs, more than"}},
		{"65 GPUs", with(func(s *Shape) { s.GPUsPerHost = 65 }), []string{"shape host", "65 GPUs", "0…64"}},
		{"negative GPUs", with(func(s *Shape) { s.GPUsPerHost = -1 }), []string{"shape host", "-1 GPUs"}},
		{"negative CPU", with(func(s *Shape) { s.CPUMilli = -5 }), []string{"shape host", "CPU -5"}},
		{"CPU too large", with(func(s *Shape) { s.CPUMilli = Unlimited + 1 }), []string{"CPU 2147483648"}},
		{"negative memory", with(func(s *Shape) { s.MemoryMiB = -1 }), []string{"shape host", "memory -1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := BuildShape(c.shape)
			require.ErrorIs(t, err, ErrInvalid)
			require.Nil(t, tr)
			for _, w := range c.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
	_, err := BuildShape(ok)
	require.NoError(t, err)
}

func TestBuildHostsErrors(t *testing.T) {
	levels := []string{"block", "rack"}
	hosts := func(f func([]HostSpec)) []HostSpec {
		hs := []HostSpec{
			{Name: "a", Path: []string{"b0", "r0"}, GPUs: 8},
			{Name: "b", Path: []string{"b0", "r1"}, GPUs: 8},
			{Name: "c", Path: []string{"b1", "r0"}, GPUs: 8},
		}
		if f != nil {
			f(hs)
		}
		return hs
	}
	for _, c := range []struct {
		name   string
		levels []string
		hosts  []HostSpec
		want   []string
	}{
		{"empty level name", []string{"block", ""}, hosts(nil), []string{"level 1", "empty name"}},
		{"duplicate level", []string{"rack", "rack"}, hosts(nil), []string{"level 1", "duplicate", `"rack"`}},
		{"level named host", []string{"host", "rack"}, hosts(nil), []string{"level 0", `"host"`}},
		{"no hosts", levels, nil, []string{"no hosts"}},
		{"unnamed host", levels, hosts(func(h []HostSpec) { h[2].Name = "" }), []string{"host 2", "no name"}},
		{"duplicate name", levels, hosts(func(h []HostSpec) { h[2].Name = "a" }),
			[]string{`host 2 ("a")`, "duplicate host name", "first at host 0"}},
		{"path too short", levels, hosts(func(h []HostSpec) { h[1].Path = h[1].Path[:1] }),
			[]string{`host 1 ("b")`, "path has 1 labels, want 2", "block, rack"}},
		{"path too long", levels, hosts(func(h []HostSpec) { h[0].Path = append(h[0].Path, "x") }),
			[]string{`host 0 ("a")`, "path has 3 labels, want 2"}},
		{"empty label", levels, hosts(func(h []HostSpec) { h[2].Path[1] = "" }),
			[]string{`host 2 ("c")`, "empty label at level rack"}},
		{"empty first label", levels, hosts(func(h []HostSpec) { h[1].Path[0] = "" }),
			[]string{`host 1 ("b")`, "empty label at level block"}},
		{"65 GPUs", levels, hosts(func(h []HostSpec) { h[1].GPUs = 65 }), []string{`host 1 ("b")`, "65 GPUs", "0…64"}},
		{"negative GPUs", levels, hosts(func(h []HostSpec) { h[0].GPUs = -1 }), []string{`host 0 ("a")`, "-1 GPUs"}},
		{"negative CPU", levels, hosts(func(h []HostSpec) { h[2].CPUMilli = -1 }), []string{`host 2 ("c")`, "CPU -1 milli-cores"}},
		{"CPU too large", levels, hosts(func(h []HostSpec) { h[2].CPUMilli = 1 << 40 }), []string{`host 2 ("c")`, "CPU 1099511627776"}},
		{"negative memory", levels, hosts(func(h []HostSpec) { h[1].MemoryMiB = -7 }), []string{`host 1 ("b")`, "memory -7 MiB"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := BuildHosts(c.levels, c.hosts)
			require.ErrorIs(t, err, ErrInvalid)
			require.Nil(t, tr)
			for _, w := range c.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
	_, err := BuildHosts(levels, hosts(nil))
	require.NoError(t, err)
}

// TestBuildHostsOrder: domains are numbered depth-first in order of first
// appearance (never sorted by name), the same label under different parents
// is a different domain, and hosts keep input order within their domain.
func TestBuildHostsOrder(t *testing.T) {
	tr, err := BuildHosts([]string{"block", "rack"}, []HostSpec{
		{Name: "n1", Path: []string{"b9", "r1"}, GPUs: 2},
		{Name: "n2", Path: []string{"b0", "r1"}, GPUs: 2},
		{Name: "n3", Path: []string{"b9", "r0"}, GPUs: 2},
		{Name: "n4", Path: []string{"b9", "r1"}, GPUs: 2},
		{Name: "n5", Path: []string{"b0", "r1"}, GPUs: 2},
	})
	require.NoError(t, err)
	require.NoError(t, fuzzCheckTree(tr))
	var paths []string
	for d := range tr.NumDomains() {
		paths = append(paths, tr.DomainPath(DomainID(d)))
	}
	require.Equal(t, []string{"", "b9", "b0", "b9/r1", "b9/r0", "b0/r1"}, paths)
	var names []string
	for h := range tr.NumHosts() {
		names = append(names, tr.HostName(HostID(h)))
	}
	require.Equal(t, []string{"n1", "n4", "n3", "n2", "n5"}, names)
	require.Equal(t, 2, tr.UniformHostGPUs())
	d, ok := tr.DomainByPath([]string{"b0", "r1"})
	require.True(t, ok)
	require.Equal(t, DomainID(5), d)
	_, ok = tr.DomainByPath([]string{"b0", "r0"})
	require.False(t, ok)
}

// ---- word edges ----

// edgeLayouts are host GPU counts whose totals sit at and across the 64-bit
// word boundaries of the global bitsets (63, 64, 65, 127, 128, 129), with
// hosts of 0, 1, 63 and 64 GPUs, hosts straddling a boundary, and 64-GPU
// hosts starting off a boundary.
var edgeLayouts = []struct {
	name  string
	sizes []int
}{
	{"total=63/63", []int{63}},
	{"total=64/64", []int{64}},
	{"total=65/64+1", []int{64, 1}},
	{"total=65/1+64", []int{1, 64}},
	{"total=65/0+1+63+0+1", []int{0, 1, 63, 0, 1}},
	{"total=127/63+64", []int{63, 64}},
	{"total=127/7x18+1", append(edgeRepeat(7, 18), 1)},
	{"total=128/64+64", []int{64, 64}},
	{"total=128/1+63+63+1", []int{1, 63, 63, 1}},
	{"total=128/0+64+0+64", []int{0, 64, 0, 64}},
	{"total=129/1+64+64", []int{1, 64, 64}},
	{"total=129/43x3", []int{43, 43, 43}},
	{"total=129/64+1+64", []int{64, 1, 64}},
	{"total=129/7x18+3", append(edgeRepeat(7, 18), 3)},
	{"total=0/0+0", []int{0, 0}},
	{"total=1/1", []int{1}},
	{"total=192/64+64+64", []int{64, 64, 64}},
	{"total=190/63+64+63+0", []int{63, 64, 63, 0}},
}

func edgeRepeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// edgeTree builds a two-level tree of the given host sizes, two racks per
// block and up to three hosts per rack.
func edgeTree(t *testing.T, sizes []int) *Tree {
	t.Helper()
	var hosts []HostSpec
	for i, n := range sizes {
		hosts = append(hosts, HostSpec{
			Name: fmt.Sprintf("h%d", i), GPUs: n, Model: "M", CPUMilli: Unlimited, MemoryMiB: Unlimited,
			Path: []string{"b" + strconv.Itoa(i/6), "r" + strconv.Itoa(i/3%2)},
		})
	}
	tr, err := BuildHosts([]string{"block", "rack"}, hosts)
	require.NoError(t, err)
	require.NoError(t, fuzzCheckTree(tr))
	return tr
}

func TestWordEdgeTrees(t *testing.T) {
	for _, c := range edgeLayouts {
		sizes := c.sizes
		t.Run(c.name, func(t *testing.T) {
			tr := edgeTree(t, sizes)
			total := 0
			for h, n := range sizes { // BuildHosts keeps this input order here
				lo, hi := tr.HostGPUs(HostID(h))
				require.Equal(t, GPUID(total), lo, "host %d", h)
				require.Equal(t, GPUID(total+n), hi, "host %d", h)
				total += n
			}
			require.Equal(t, total, tr.NumGPUs())
			s := NewState(tr)
			require.Len(t, s.FreeWords(), (total+63)/64)
			edgeCompare(t, s, nil)

			pods := edgePods(tr)
			if len(pods) == 0 {
				return
			}
			add := Delta{Ops: []Op{AddJob(1, Job{Preemptible: true}, pods...)}}
			require.NoError(t, s.Apply(add))
			require.NoError(t, s.Check())
			edgeCompare(t, s, pods)
			lo, hi := s.PreemptibleBelow(0, 1)
			require.Equal(t, edgeCount(pods), lo)
			require.Equal(t, edgeCount(pods), hi)

			if edgeCount(pods) > 0 { // the same GPUs again are stale; the State is untouched
				before, _ := s.MarshalBinary()
				require.ErrorIs(t, s.Apply(Delta{Ops: []Op{AddJob(2, Job{}, pods...)}}), ErrStale)
				after, _ := s.MarshalBinary()
				require.Equal(t, before, after)
			}

			// Fail the GPUs on each side of every word boundary, then heal.
			var health []Op
			for g := 63; g < total; g += 64 {
				health = append(health, SetGPUHealth(GPUID(g), Failed))
				if g+1 < total {
					health = append(health, SetGPUHealth(GPUID(g+1), Failed))
				}
			}
			if len(health) > 0 {
				require.NoError(t, s.Apply(Delta{Ops: health}))
				require.NoError(t, s.Check())
				for i := range health {
					health[i].Health = Healthy
				}
				require.NoError(t, s.Apply(Delta{Ops: health}))
			}

			require.NoError(t, s.Apply(Delta{Ops: []Op{RemoveJob(1)}}))
			require.NoError(t, s.Check())
			edgeCompare(t, s, nil)
		})
	}
}

// edgePods places one pod per host at the edges: GPUs on both sides of every
// 64-bit word boundary inside the host, the cluster's first and last GPU,
// and every GPU of 63- and 64-GPU hosts; a CPU-only pod on 0-GPU hosts.
func edgePods(tr *Tree) []Pod {
	total := tr.NumGPUs()
	var pods []Pod
	for hi := range tr.NumHosts() {
		h := HostID(hi)
		lo, end := tr.HostGPUs(h)
		n := int(end - lo)
		var m uint64
		switch {
		case n == 0:
			pods = append(pods, Pod{Host: h, CPUMilli: 1})
			continue
		case n >= 63:
			m = hostMask(n)
		}
		for g := int(lo); g < int(end); g++ {
			if g%64 == 63 && g+1 < int(end) || g%64 == 0 && g > int(lo) || g == 0 || g == total-1 {
				m |= 1 << uint(g-int(lo))
			}
		}
		if m != 0 {
			pods = append(pods, Pod{Host: h, GPUs: m})
		}
	}
	return pods
}

func edgeCount(pods []Pod) int {
	n := 0
	for _, p := range pods {
		n += p.NumGPUs()
	}
	return n
}

// edgeCompare checks the free-mask, per-host masks, per-domain free counts
// and PodCapacity against a direct computation from the pods placed.
func edgeCompare(t *testing.T, s *State, pods []Pod) {
	t.Helper()
	tr := s.Tree()
	used := make([]uint64, tr.NumHosts())
	for _, p := range pods {
		used[p.Host] |= p.GPUs
	}
	free := s.FreeMask()
	for g := 0; g < len(s.FreeWords())*64; g++ {
		want := false
		if g < tr.NumGPUs() {
			h := tr.GPUHost(GPUID(g))
			lo, _ := tr.HostGPUs(h)
			want = used[h]&(1<<uint(g-int(lo))) == 0
		}
		require.Equal(t, want, free.Test(uint(g)), "free-mask bit %d", g)
	}
	for hi := range tr.NumHosts() {
		h := HostID(hi)
		want := hostMask(tr.HostGPUCount(h)) &^ used[h]
		require.Equal(t, want, s.HostFreeMask(h), "host %d", h)
		require.Equal(t, bits.OnesCount64(want), s.HostFree(h))
	}
	for di := range tr.NumDomains() {
		d := DomainID(di)
		lo, hi := tr.Hosts(d)
		freeGPUs := 0
		for h := lo; h < hi; h++ {
			freeGPUs += bits.OnesCount64(hostMask(tr.HostGPUCount(h)) &^ used[h])
		}
		require.Equal(t, freeGPUs, s.Free(d), "domain %s", tr.DomainPath(d))
		for g := 1; g <= MaxHostGPUs; g++ {
			want := 0
			for h := lo; h < hi; h++ {
				want += bits.OnesCount64(hostMask(tr.HostGPUCount(h))&^used[h]) / g
			}
			require.Equal(t, want, s.PodCapacity(d, g), "PodCapacity(%q, %d)", tr.DomainPath(d), g)
		}
	}
	require.Equal(t, uint(s.Free(0)), free.Count())
}

// TestWordEdgeShapes: regular shapes whose GPU totals are 63, 64, 65, 127,
// 128 and 129, filled pod by pod across word boundaries, then emptied.
func TestWordEdgeShapes(t *testing.T) {
	for _, sh := range []Shape{
		{Levels: []string{"rack"}, FanOut: []int{1, 1}, GPUsPerHost: 63},
		{Levels: []string{"rack"}, FanOut: []int{2, 1}, GPUsPerHost: 32},
		{Levels: []string{"rack"}, FanOut: []int{1, 5}, GPUsPerHost: 13},
		{Levels: []string{"rack"}, FanOut: []int{1, 127}, GPUsPerHost: 1},
		{Levels: []string{"block", "rack"}, FanOut: []int{2, 1, 1}, GPUsPerHost: 64},
		{Levels: []string{"rack"}, FanOut: []int{3, 1}, GPUsPerHost: 43},
		{Levels: nil, FanOut: []int{3}, GPUsPerHost: 0},
	} {
		t.Run(fmt.Sprintf("gpus=%d/%v×%d", sh.GPUs(), sh.FanOut, sh.GPUsPerHost), func(t *testing.T) {
			tr, err := BuildShape(sh)
			require.NoError(t, err)
			require.NoError(t, fuzzCheckTree(tr))
			s := NewState(tr)
			var pods []Pod
			for h := range tr.NumHosts() {
				// Two pods per host: the lower and upper halves of its GPUs.
				n := tr.HostGPUCount(HostID(h))
				half := hostMask(n / 2)
				for i, m := range []uint64{half, hostMask(n) &^ half} {
					if m == 0 {
						continue
					}
					id := JobID(2*h + i)
					p := Pod{Host: HostID(h), GPUs: m}
					require.NoError(t, s.Apply(Delta{Ops: []Op{AddJob(id, Job{}, p)}}))
					pods = append(pods, p)
					require.NoError(t, s.Check())
				}
			}
			edgeCompare(t, s, pods)
			require.Zero(t, s.Free(0))
			require.Zero(t, s.FreeMask().Count())
			for id := range s.JobIDBound() {
				if s.HasJob(id) {
					require.NoError(t, s.Apply(Delta{Ops: []Op{RemoveJob(id)}}))
				}
			}
			require.NoError(t, s.Check())
			edgeCompare(t, s, nil)
			require.True(t, s.DomainIdle(0))
		})
	}
}

// TestHostNameRoundTrip: shape host names are paths; HostByName rejects
// partial paths and names of other levels.
func TestHostNameRoundTrip(t *testing.T) {
	tr, err := BuildShape(Shape{Levels: []string{"block", "rack"}, FanOut: []int{2, 2, 3}, GPUsPerHost: 4})
	require.NoError(t, err)
	require.Equal(t, "block1/rack0/host2", tr.HostName(8))
	h, ok := tr.HostByName("block1/rack0/host2")
	require.True(t, ok)
	require.Equal(t, HostID(8), h)
	for _, bad := range []string{"", "host2", "block1/host2", "block1/rack0", "block1/rack0/host3",
		"block1/rack0/host2/x", "rack0/block1/host2", "block2/rack0/host0"} {
		_, ok := tr.HostByName(bad)
		require.False(t, ok, "HostByName(%q)", bad)
	}
	require.False(t, strings.Contains(tr.HostName(0), "//"))
}

// TestUniformHostGPUs: the GPU count every host has, or 0 when they differ.
func TestUniformHostGPUs(t *testing.T) {
	for _, c := range []struct {
		gpus []int
		want int
	}{{[]int{4}, 4}, {[]int{8, 8, 8}, 8}, {[]int{8, 4, 8}, 0}, {[]int{0, 4}, 0}, {[]int{4, 0}, 0}, {[]int{0, 0}, 0}, {[]int{64, 64}, 64}} {
		var hosts []HostSpec
		for i, g := range c.gpus {
			hosts = append(hosts, HostSpec{Name: fmt.Sprint("n", i), Path: []string{"r0"}, GPUs: g})
		}
		tr, err := BuildHosts([]string{"rack"}, hosts)
		require.NoError(t, err)
		require.Equal(t, c.want, tr.UniformHostGPUs(), "%v", c.gpus)
	}
	for _, sh := range []Shape{NVL72(1), HGX(1)} {
		tr, err := BuildShape(sh)
		require.NoError(t, err)
		require.Equal(t, sh.GPUsPerHost, tr.UniformHostGPUs())
	}
}

// TestGPUHost: the division on uniform trees answers as the search does,
// for every GPU and past both ends.
func TestGPUHost(t *testing.T) {
	for _, gpus := range [][]int{{4, 4, 4}, {3, 3}, {8, 2, 8}, {64, 64}, {1}} {
		var hosts []HostSpec
		for i, g := range gpus {
			hosts = append(hosts, HostSpec{Name: fmt.Sprint("n", i), Path: []string{"r0"}, GPUs: g})
		}
		tr, err := BuildHosts([]string{"rack"}, hosts)
		require.NoError(t, err)
		search := *tr
		search.uniGPUs = 0
		for g := GPUID(-70); g < GPUID(tr.NumGPUs()+70); g++ {
			require.Equal(t, search.GPUHost(g), tr.GPUHost(g), "%v: GPU %d", gpus, g)
		}
	}
}
