package fgd

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/blinksched/blink/bench/openb"
)

// This file holds prototypes of placement policies measured under the
// protocol, for the report on how Blink's policy could beat FGD. They are
// not Blink's policy and not part of `blink fgd`; each test skips unless its
// environment variables are set. Policies (FGD_PROTO, comma-separated; any
// name of Policies works too):
//
//	fgd            the paper's FGD as re-implemented here (fgdModel)
//	fgdbf          fgd, ties to the BestFit key
//	fgdbfw1, w4    fgdbf with typical pods weighted 1 + w·GPUs (FGD's GpuResWeight)
//	bfgpu, fgdgpu  fractions to the cluster-wide best-fitting GPU; others by bestfit, fgdbf
//	caploss        least loss of expected capacity (capLoss)
//	caprelNN       capLoss with each shape's loss divided by Cap(m)^(NN/100)
//	caprel25topK   caprel25 with the K shapes of most GPU demand only
//	caprel25shortK caprel25 scoring only the K nodes of least BestFit key
//	caprel25cnt, caprel25sqrt  caprel25 weighting shapes by count, √(count·demand)
//	caprelNNstatic caprelNN with Cap(m) of the empty cluster (the rule of
//	               placement.Profile; 25: 95.37% at 100% on seeds 42-44)
//	caprel25stopK  caprel25static with the K shapes of most GPU demand only
//	caprel25g      caprel25static ignoring the pod's own CPU and memory (87.7%)
//	repK           caprel25static scoring exactly only the K nodes of least
//	               loss for a representative pod of the pod's GPU shape
//
// Run, from the repository root:
//
//	BLINK_OPENB=../shared/traces/openb FGD_PROTO=fgd,caprel25 FGD_SEEDS=42-51 \
//	    go test -run 'Prototype$' -v -timeout 30m ./bench/fgd
//	BLINK_OPENB=../shared/traces/openb FGD_WASTE=bestfit,fgdbf go test -run PrototypeWaste -v ./bench/fgd
//	BLINK_OPENB=../shared/traces/openb FGD_SKIPS=caploss go test -run PrototypeSkips -v ./bench/fgd
//	BLINK_OPENB=../shared/traces/openb FGD_STATES=1 go test -run PrototypeStates -v ./bench/fgd

// fragGroup is the typical pods of one GPU shape (num GPUs of milli each,
// models), sorted by CPU with prefix sums of their popularity.
type fragGroup struct {
	num, milli int32
	models     []int // nil: any
	cpu        []int64
	cum        []float64 // cum[i] = Σ popularity of cpu[0..i]
}

// fgdModel is the FGD paper's expected fragmentation of a node: for each
// typical GPU pod m (popularity p_m), the node's free GPU milli that m
// cannot use — all of it when m does not fit the node (GPUs, CPU or model),
// else the free milli on GPUs with less than m's per-GPU milli — summed
// with weights p_m. (CPU-only typical pods add p·free to every node alike,
// which no choice changes; memory is not part of the measure.)
type fgdModel struct {
	groups []fragGroup
	total  float64 // Σ p over GPU typical pods
}

func newFGDModel(shapes []openb.Shape, gpuWeight float64) *fgdModel {
	type key struct {
		num, milli int32
		models     string
	}
	byKey := map[key]*fragGroup{}
	var keys []key
	m := &fgdModel{}
	cpus := map[key]map[int64]float64{}
	for i := range shapes {
		s := &shapes[i]
		if s.GPUs == 0 || s.NoModel {
			continue
		}
		milli := s.Milli
		if milli == 0 {
			milli = 1000
		}
		k := key{s.GPUs, milli, fmt.Sprint(s.Models)}
		if byKey[k] == nil {
			byKey[k] = &fragGroup{num: s.GPUs, milli: milli, models: s.Models}
			cpus[k] = map[int64]float64{}
			keys = append(keys, k)
		}
		w := 1.0
		if s.Milli == 0 {
			w += gpuWeight * float64(s.GPUs)
		}
		cpus[k][int64(s.CPUMilli)] += w
		m.total += w
	}
	for _, k := range keys {
		g := byKey[k]
		for c := range cpus[k] {
			g.cpu = append(g.cpu, c)
		}
		slices.Sort(g.cpu)
		sum := 0.0
		for _, c := range g.cpu {
			sum += cpus[k][c]
			g.cum = append(g.cum, sum)
		}
		m.groups = append(m.groups, *g)
	}
	return m
}

// frag is the node's expected fragmentation (in milli-GPU × popularity).
func (f *fgdModel) frag(model int, cpuLeft int64, gpus []int32) float64 {
	var free int64
	for _, x := range gpus {
		free += int64(x)
	}
	if free == 0 {
		return 0
	}
	fr := float64(free) * f.total
	for gi := range f.groups {
		g := &f.groups[gi]
		if g.models != nil && !slices.Contains(g.models, model) {
			continue
		}
		// typical pods of the group whose CPU fits
		n, _ := slices.BinarySearch(g.cpu, cpuLeft+1)
		if n == 0 {
			continue
		}
		var cnt int32
		var usable int64
		for _, x := range gpus {
			if x >= g.milli {
				cnt++
				usable += int64(x)
			}
		}
		if cnt >= g.num {
			fr -= g.cum[n-1] * float64(usable)
		}
	}
	return fr
}

// fgdPolicy places each pod on the node, and GPU, that least increases the
// node's expected fragmentation (the paper's FGD); ties go to the BestFit
// key when tieBestFit, else to the lowest node.
type fgdPolicy struct {
	m          *nodes
	f          *fgdModel
	tieBestFit bool
	before     []float64 // cached frag per node
	scratch    []int32
	last       int
}

func newFGDPolicy(c *openb.Cluster, shapes []openb.Shape, tieBestFit bool, gpuWeight float64) *fgdPolicy {
	return &fgdPolicy{m: newNodes(c), f: newFGDModel(shapes, gpuWeight), tieBestFit: tieBestFit,
		before: make([]float64, len(c.Nodes))}
}

func (p *fgdPolicy) Reset(uint64) {
	p.m.reset()
	for i := range p.before {
		p.before[i] = p.f.frag(p.m.model[i], p.m.cpu[i], p.m.gpus(i))
	}
}

func (p *fgdPolicy) Place(s *openb.Shape) (bool, error) {
	m := p.m
	m.setPod(s)
	best, bestGPU := -1, -1
	var bestD float64
	var bestKey int64
	for i := range m.model {
		if !m.fits(i, s) {
			continue
		}
		d, g := p.delta(i, s)
		key := (m.cpu[i] - int64(s.CPUMilli)) + 16*(m.freeMilli[i]-s.MilliGPU())
		if best < 0 || d < bestD-1e-9 || p.tieBestFit && d < bestD+1e-9 && key < bestKey {
			best, bestGPU, bestD, bestKey = i, g, d, key
		}
	}
	if best < 0 {
		return false, nil
	}
	m.take(best, s, bestGPU)
	p.before[best] = p.f.frag(m.model[best], m.cpu[best], m.gpus(best))
	p.last = best
	return true, nil
}

// delta returns the frag increase of placing s on node i and the GPU (for a
// fractional pod) that makes it least.
func (p *fgdPolicy) delta(i int, s *openb.Shape) (float64, int) {
	m := p.m
	gs := m.gpus(i)
	p.scratch = append(p.scratch[:0], gs...)
	cpu := m.cpu[i] - int64(s.CPUMilli)
	if s.GPUs == 0 {
		return p.f.frag(m.model[i], cpu, p.scratch) - p.before[i], -1
	}
	if s.Milli == 0 {
		left := s.GPUs
		for g := range p.scratch {
			if left > 0 && p.scratch[g] == 1000 {
				p.scratch[g] = 0
				left--
			}
		}
		return p.f.frag(m.model[i], cpu, p.scratch) - p.before[i], -1
	}
	bestD, bestG := 0.0, -1
	for g, x := range gs {
		if x < s.Milli || slices.Contains(gs[:g], x) { // one try per distinct free value
			continue
		}
		p.scratch[g] -= s.Milli
		d := p.f.frag(m.model[i], cpu, p.scratch) - p.before[i]
		p.scratch[g] += s.Milli
		if bestG < 0 || d < bestD-1e-9 {
			bestD, bestG = d, g
		}
	}
	return bestD, bestG
}

// TestPrototype measures the prototypes on the openb trace (see the top of
// the file). FGD_SEEDS overrides the seeds (default 42-44).
func TestPrototype(t *testing.T) {
	dir, names := os.Getenv("BLINK_OPENB"), os.Getenv("FGD_PROTO")
	if dir == "" || names == "" {
		t.Skip("set BLINK_OPENB and FGD_PROTO to measure the prototypes")
	}
	c, shapes := loadOpenb(t, dir)
	var err error
	seeds := []uint64{42, 43, 44}
	if s := os.Getenv("FGD_SEEDS"); s != "" {
		if seeds, err = ParseSeeds(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range strings.Split(names, ",") {
		var p Placer
		switch name {
		case "fgd":
			p = newFGDPolicy(c, shapes, false, 0)
		case "fgdbf":
			p = newFGDPolicy(c, shapes, true, 0)
		case "fgdbfw1":
			p = newFGDPolicy(c, shapes, true, 1)
		case "fgdbfw4":
			p = newFGDPolicy(c, shapes, true, 4)
		case "caploss":
			p = newCapLoss(c, shapes)
		case "caprel", "caprel10", "caprel15", "caprel25", "caprel35", "caprel50", "caprel75":
			cp := newCapLoss(c, shapes)
			cp.relative, cp.alpha = true, 1
			if a, ok := strings.CutPrefix(name, "caprel"); ok && a != "" {
				n, _ := strconv.Atoi(a)
				cp.alpha = float64(n) / 100
			}
			p = cp
		case "caprel25static", "caprel50static", "caprel100static":
			cp := newCapLoss(c, shapes)
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "caprel"), "static"))
			cp.relative, cp.alpha, cp.static = true, float64(n)/100, true
			p = cp
		case "caprel25stop32", "caprel25stop48", "caprel25stop64":
			cp := newCapLoss(c, shapes)
			cp.relative, cp.alpha, cp.static = true, 0.25, true
			k, _ := strconv.Atoi(strings.TrimPrefix(name, "caprel25stop"))
			cp.keepTop(k)
			p = cp
		case "rep4", "rep8", "rep16", "rep32":
			k, _ := strconv.Atoi(strings.TrimPrefix(name, "rep"))
			p = newRepLoss(c, shapes, k)
		case "caprel25g":
			cp := newCapLoss(c, shapes)
			cp.relative, cp.alpha, cp.static, cp.gpuOnly = true, 0.25, true, true
			p = cp
		case "caprel25cnt", "caprel25sqrt":
			cp := newCapLoss(c, shapes)
			cp.relative, cp.alpha = true, 0.25
			for j := range cp.types {
				t := &cp.types[j]
				if name == "caprel25cnt" {
					t.w = t.n
				} else {
					t.w = math.Sqrt(t.w * t.n)
				}
			}
			p = cp
		case "caprel25short16", "caprel25short64", "caprel25short256":
			cp := newCapLoss(c, shapes)
			cp.relative, cp.alpha = true, 0.25
			cp.shortlist, _ = strconv.Atoi(strings.TrimPrefix(name, "caprel25short"))
			p = cp
		case "caprel25top8", "caprel25top16", "caprel25top32":
			cp := newCapLoss(c, shapes)
			cp.relative, cp.alpha = true, 0.25
			k, _ := strconv.Atoi(strings.TrimPrefix(name, "caprel25top"))
			cp.keepTop(k)
			p = cp
		case "bfgpu":
			b := &bestFit{m: newNodes(c)}
			p = &gpuFit{m: b.m, whole: b}
		case "fgdgpu":
			f := newFGDPolicy(c, shapes, true, 0)
			p = &gpuFit{m: f.m, whole: f}
		default:
			if p, err = NewPlacer(name, c, shapes); err != nil {
				t.Fatal(err)
			}
		}
		var sum Summary
		for _, seed := range seeds {
			work, _ := Draw(shapes, c.CapacityMilli(), seed)
			p.Reset(seed)
			r, err := Run(p, shapes, work, c.CapacityMilli())
			if err != nil {
				t.Fatal(err)
			}
			sum.Runs = append(sum.Runs, r)
			sum.Pods += r.Pods
			sum.Elapsed += r.Elapsed
			for k := range sum.Curve {
				sum.Curve[k] += r.Curve[k] / float64(len(seeds))
			}
		}
		t.Logf("%-8s seeds %s: 90%% %.2f  100%% %.2f  130%% %.2f  %.0f pods/s", name, formatSeeds(seeds),
			sum.Curve[90], sum.Curve[100], sum.Curve[130], sum.PodsPerSecond())
	}
}

// TestPrototypeWaste prints where the free GPU is at the end of a run (130%
// arrived), per node type: on partly used GPUs, or on unused GPUs.
func TestPrototypeWaste(t *testing.T) {
	dir, names := os.Getenv("BLINK_OPENB"), os.Getenv("FGD_WASTE")
	if dir == "" || names == "" {
		t.Skip("set BLINK_OPENB and FGD_WASTE")
	}
	c, shapes := loadOpenb(t, dir)
	for _, name := range strings.Split(names, ",") {
		var m *nodes
		var p Placer
		switch name {
		case "fgdbf":
			fp := newFGDPolicy(c, shapes, true, 0)
			p, m = fp, fp.m
		case "bestfit":
			bp := &bestFit{m: newNodes(c)}
			p, m = bp, bp.m
		case "blink":
			p = newBlink(c)
		}
		work, _ := Draw(shapes, c.CapacityMilli(), 42)
		p.Reset(42)
		r, _ := Run(p, shapes, work, c.CapacityMilli())
		if m == nil {
			m = view(c, p)
		}
		type agg struct {
			nodes, gpus     int
			partial, unused int64
			cpuLeft         int64
		}
		by := map[string]*agg{}
		var keys []string
		for i, n := range c.Nodes {
			k := fmt.Sprintf("%s/%d/%dc", n.Model, n.GPUs, n.CPUMilli/1000)
			if by[k] == nil {
				by[k] = &agg{}
				keys = append(keys, k)
			}
			a := by[k]
			a.nodes++
			a.gpus += n.GPUs
			for _, x := range m.gpus(i) {
				if x == 1000 {
					a.unused += 1000
				} else {
					a.partial += int64(x)
				}
			}
			if m.freeMilli[i] > 0 {
				a.cpuLeft += m.cpu[i]
			}
		}
		t.Logf("%s: alloc %.2f%% at 130%%", name, r.Curve[130])
		for _, k := range keys {
			a := by[k]
			t.Logf("  %-16s nodes %4d GPUs %4d  free on partly used %7.2f GPUs, unused %5.0f GPUs; cpu left on nodes with free GPU %6.0f cores",
				k, a.nodes, a.gpus, float64(a.partial)/1000, float64(a.unused)/1000, float64(a.cpuLeft)/1000)
		}
	}
}

// gpuFit places a fractional pod on the GPU, cluster-wide, with the least
// free milli that still fits (online best fit of fractions into GPUs), ties
// to the BestFit node key; other pods go to whole (a Placer over the same
// node model: bestFit or fgdPolicy).
type gpuFit struct {
	m     *nodes
	whole Placer
}

func (p *gpuFit) Reset(seed uint64) { p.whole.Reset(seed) }

func (p *gpuFit) Place(s *openb.Shape) (bool, error) {
	if s.Milli == 0 {
		return p.whole.Place(s)
	}
	m := p.m
	m.setPod(s)
	best, bestGPU := -1, -1
	var bestLeft, bestKey int64
	for i := range m.model {
		if !m.fits(i, s) {
			continue
		}
		key := (m.cpu[i] - int64(s.CPUMilli)) + 16*(m.freeMilli[i]-s.MilliGPU())
		for g, x := range m.gpus(i) {
			if x < s.Milli {
				continue
			}
			left := int64(x - s.Milli)
			if best < 0 || left < bestLeft || left == bestLeft && key < bestKey {
				best, bestGPU, bestLeft, bestKey = i, g, left, key
			}
		}
	}
	if best < 0 {
		return false, nil
	}
	m.take(best, s, bestGPU)
	if f, ok := p.whole.(*fgdPolicy); ok {
		f.before[best] = f.f.frag(m.model[best], m.cpu[best], m.gpus(best))
	}
	return true, nil
}

// capLoss places each pod where it destroys the least expected usable
// capacity: for every typical pod shape m (popularity p_m, GPU demand d_m
// milli), cap_n(m) is how many such pods node n can still take (min over
// GPUs — whole: ⌊unused/g⌋, fraction: Σ ⌊free/milli⌋ — CPU and memory, the
// same capacity Blink's placement uses), and the loss of placing the pod on
// n is Σ p_m·d_m·(cap_before − cap_after). Ties: the BestFit key. Inside a
// node, a fractional pod takes the GPU with the least loss (then least free).
type capLoss struct {
	m *nodes
	// relative: the loss of shape m counts Δcap_n(m) / Cap(m), Cap(m) being
	// the whole cluster's capacity for m (scarce shapes weigh more).
	relative bool
	alpha    float64   // relative: divide by Cap(m)^alpha
	static   bool      // relative: Cap(m) of the empty cluster, not the current one
	gpuOnly  bool      // the loss ignores the pod's own CPU and memory
	caps     [][]int64 // per node, per type
	total    []int64   // per type, Σ over nodes
	after    []int64   // per type, scratch
	inv      []float64 // per type: w / Cap^alpha, refreshed per pod
	// shortlist > 0: score only the shortlist nodes of least BestFit key
	shortlist int
	cands     []keyNode
	types     []capType
	gs        []capGPU // distinct GPU shapes of the types
	before    []float64
	sc        []int32
	gcap      []int64 // per gs: GPU capacity of the node being scored
}

type keyNode struct {
	key int64
	i   int
}

type capType struct {
	gi       int // index into gs
	cpu, mem int64
	models   []int
	w        float64 // p_m · d_m
	n        float64 // p_m
}

type capGPU struct{ num, milli int32 }

func newCapLoss(c *openb.Cluster, shapes []openb.Shape) *capLoss {
	p := &capLoss{m: newNodes(c), before: make([]float64, len(c.Nodes))}
	type key struct {
		gi       int
		cpu, mem int64
		models   string
	}
	idx := map[key]int{}
	for i := range shapes {
		s := &shapes[i]
		if s.GPUs == 0 || s.NoModel {
			continue
		}
		g := capGPU{s.GPUs, s.Milli}
		gi := slices.Index(p.gs, g)
		if gi < 0 {
			gi = len(p.gs)
			p.gs = append(p.gs, g)
		}
		k := key{gi, int64(s.CPUMilli), int64(s.MemoryMiB), fmt.Sprint(s.Models)}
		j, ok := idx[k]
		if !ok {
			j = len(p.types)
			idx[k] = j
			p.types = append(p.types, capType{gi: gi, cpu: k.cpu, mem: k.mem, models: s.Models})
		}
		p.types[j].w += float64(s.MilliGPU())
		p.types[j].n++
	}
	p.gcap = make([]int64, len(p.gs))
	return p
}

// keepTop keeps the k typical shapes of most GPU demand (all if k ≤ 0).
func (p *capLoss) keepTop(k int) {
	if k <= 0 || k >= len(p.types) {
		return
	}
	slices.SortStableFunc(p.types, func(a, b capType) int {
		switch {
		case a.w > b.w:
			return -1
		case a.w < b.w:
			return 1
		}
		return 0
	})
	p.types = p.types[:k]
}

// value is Σ w_m · cap_n(m) for a node state; it leaves cap_n(m) in p.after.
func (p *capLoss) value(model int, cpu, mem int64, gpus []int32) float64 {
	for gi, g := range p.gs {
		var n int64
		if g.milli == 0 {
			for _, x := range gpus {
				if x == 1000 {
					n++
				}
			}
			n /= int64(g.num)
		} else {
			for _, x := range gpus {
				n += int64(x / g.milli)
			}
		}
		p.gcap[gi] = n
	}
	v := 0.0
	if len(p.after) != len(p.types) {
		p.after = make([]int64, len(p.types))
	}
	for i := range p.types {
		t := &p.types[i]
		n := p.gcap[t.gi]
		p.after[i] = 0
		if n == 0 || t.models != nil && !slices.Contains(t.models, model) {
			continue
		}
		if t.cpu > 0 {
			n = min(n, cpu/t.cpu)
		}
		if t.mem > 0 {
			n = min(n, mem/t.mem)
		}
		p.after[i] = n
		v += t.w * float64(n)
	}
	return v
}

// relLoss is Σ w_m · (cap_before − cap_after)/Cap(m) for node i, with the
// after caps in p.after.
func (p *capLoss) relLoss(i int) float64 {
	l := 0.0
	for j := range p.types {
		if d := p.caps[i][j] - p.after[j]; d != 0 {
			l += p.inv[j] * float64(d)
		}
	}
	return l
}

// store records node i's caps (in p.after) in the per-node table and totals.
func (p *capLoss) store(i int) {
	if p.caps == nil {
		p.caps = make([][]int64, len(p.before))
		p.total = make([]int64, len(p.types))
	}
	if p.caps[i] == nil {
		p.caps[i] = make([]int64, len(p.types))
	}
	for j := range p.types {
		p.total[j] += p.after[j] - p.caps[i][j]
		p.caps[i][j] = p.after[j]
	}
}

func (p *capLoss) Reset(uint64) {
	p.m.reset()
	p.caps, p.total = nil, nil
	if p.static {
		p.inv = nil
	}
	for i := range p.before {
		p.before[i] = p.value(p.m.model[i], p.m.cpu[i], p.m.mem[i], p.m.gpus(i))
		p.store(i)
	}
}

func (p *capLoss) Place(s *openb.Shape) (bool, error) {
	m := p.m
	if p.relative && (!p.static || p.inv == nil) {
		if p.inv == nil {
			p.inv = make([]float64, len(p.types))
		}
		for j, t := range p.types {
			p.inv[j] = t.w / math.Pow(float64(max(p.total[j], 1)), p.alpha)
		}
	}
	m.setPod(s)
	best, bestGPU := -1, -1
	var bestL float64
	var bestKey int64
	consider := func(i int, key int64) {
		l, g := p.loss(i, s)
		if best < 0 || l < bestL-1e-9 || l < bestL+1e-9 && key < bestKey {
			best, bestGPU, bestL, bestKey = i, g, l, key
		}
	}
	p.cands = p.cands[:0]
	for i := range m.model {
		if !m.fits(i, s) {
			continue
		}
		key := (m.cpu[i] - int64(s.CPUMilli)) + 16*(m.freeMilli[i]-s.MilliGPU())
		if p.shortlist <= 0 {
			consider(i, key)
			continue
		}
		// keep the shortlist nodes of least key, sorted (insertion)
		if len(p.cands) == p.shortlist && key >= p.cands[len(p.cands)-1].key {
			continue
		}
		if len(p.cands) < p.shortlist {
			p.cands = append(p.cands, keyNode{})
		}
		j := len(p.cands) - 1
		for j > 0 && p.cands[j-1].key > key {
			p.cands[j] = p.cands[j-1]
			j--
		}
		p.cands[j] = keyNode{key, i}
	}
	for _, c := range p.cands {
		consider(c.i, c.key)
	}
	if best < 0 {
		return false, nil
	}
	m.take(best, s, bestGPU)
	p.before[best] = p.value(m.model[best], m.cpu[best], m.mem[best], m.gpus(best))
	p.store(best)
	return true, nil
}

// lossOf turns an after-value into the loss of node i.
func (p *capLoss) lossOf(i int, after float64) float64 {
	if p.relative {
		return p.relLoss(i)
	}
	return p.before[i] - after
}

func (p *capLoss) loss(i int, s *openb.Shape) (float64, int) {
	m := p.m
	gs := m.gpus(i)
	p.sc = append(p.sc[:0], gs...)
	cpu, mem := m.cpu[i]-int64(s.CPUMilli), m.mem[i]-int64(s.MemoryMiB)
	if p.gpuOnly {
		cpu, mem = m.cpu[i], m.mem[i]
	}
	if s.Milli == 0 {
		left := s.GPUs
		for g := range p.sc {
			if left > 0 && p.sc[g] == 1000 {
				p.sc[g] = 0
				left--
			}
		}
		return p.lossOf(i, p.value(m.model[i], cpu, mem, p.sc)), -1
	}
	bestL, bestG := 0.0, -1
	for g, x := range gs {
		if x < s.Milli || slices.Contains(gs[:g], x) {
			continue
		}
		p.sc[g] -= s.Milli
		l := p.lossOf(i, p.value(m.model[i], cpu, mem, p.sc))
		p.sc[g] += s.Milli
		if bestG < 0 || l < bestL-1e-9 || l < bestL+1e-9 && x < gs[bestG] {
			bestL, bestG = l, g
		}
	}
	return bestL, bestG
}

// TestPrototypeSkips lists the shapes a prototype skips before 100% arrived.
func TestPrototypeSkips(t *testing.T) {
	dir, name := os.Getenv("BLINK_OPENB"), os.Getenv("FGD_SKIPS")
	if dir == "" || name == "" {
		t.Skip("set BLINK_OPENB and FGD_SKIPS")
	}
	c, shapes := loadOpenb(t, dir)
	var p Placer
	switch name {
	case "caploss":
		p = newCapLoss(c, shapes)
	default:
		p, _ = NewPlacer(name, c, shapes)
	}
	work, _ := Draw(shapes, c.CapacityMilli(), 42)
	p.Reset(42)
	var arrived int64
	skips := map[string]int{}
	for _, i := range work {
		s := &shapes[i]
		arrived += s.MilliGPU()
		if arrived*100 > 100*c.CapacityMilli() {
			break
		}
		ok, _ := p.Place(s)
		if !ok {
			skips[fmt.Sprintf("%dx%d cpu %d at %d%%", s.GPUs, s.Milli, s.CPUMilli/1000, arrived*100/c.CapacityMilli())]++
		}
	}
	keys := make([]string, 0, len(skips))
	for k := range skips {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	t.Log(keys)
}

// TestPrototypeStates counts the distinct node states (model, CPU, memory,
// GPU milli as a multiset) during a caprel25 run: the work per pod of a
// policy that scores each distinct state once.
func TestPrototypeStates(t *testing.T) {
	dir := os.Getenv("BLINK_OPENB")
	if dir == "" || os.Getenv("FGD_STATES") == "" {
		t.Skip("set BLINK_OPENB and FGD_STATES")
	}
	c, shapes := loadOpenb(t, dir)
	p := newCapLoss(c, shapes)
	p.relative, p.alpha = true, 0.25
	work, _ := Draw(shapes, c.CapacityMilli(), 42)
	p.Reset(42)
	t.Logf("%d typical shapes in %d GPU groups", len(p.types), len(p.gs))
	var arrived int64
	next := 10
	for _, i := range work {
		s := &shapes[i]
		p.Place(s)
		arrived += s.MilliGPU()
		if arrived*100 >= int64(next)*c.CapacityMilli() {
			sigs := map[string]bool{}
			for n := range c.Nodes {
				g := slices.Clone(p.m.gpus(n))
				slices.Sort(g)
				sigs[fmt.Sprint(p.m.model[n], p.m.cpu[n], p.m.mem[n], g)] = true
			}
			t.Logf("arrived %d%%: %d distinct node states of %d nodes", next, len(sigs), len(c.Nodes))
			next += 30
		}
	}
}

// repLoss is caprel25 (static weights) with a shortlist: per GPU shape
// (GPUs, milli) of the pod, a representative pod (the mean CPU and memory of
// the list's pods of that GPU shape); the k feasible nodes of least loss for
// the representative (ties: BestFit key) are scored exactly for the pod.
type repLoss struct {
	*capLoss
	k   int
	rep map[[2]int32][2]int32
	sl  []repCand
}

type repCand struct {
	l   float64
	key int64
	i   int
}

func newRepLoss(c *openb.Cluster, shapes []openb.Shape, k int) *repLoss {
	cp := newCapLoss(c, shapes)
	cp.relative, cp.alpha, cp.static = true, 0.25, true
	p := &repLoss{capLoss: cp, k: k, rep: map[[2]int32][2]int32{}}
	sum := map[[2]int32][3]int64{}
	for i := range shapes {
		s := &shapes[i]
		g := [2]int32{s.GPUs, s.Milli}
		x := sum[g]
		x[0] += int64(s.CPUMilli)
		x[1] += int64(s.MemoryMiB)
		x[2]++
		sum[g] = x
	}
	for g, x := range sum {
		p.rep[g] = [2]int32{int32(x[0] / x[2]), int32(x[1] / x[2])}
	}
	return p
}

func (p *repLoss) Place(s *openb.Shape) (bool, error) {
	m := p.m
	if p.inv == nil {
		p.inv = make([]float64, len(p.types))
		for j, t := range p.types {
			p.inv[j] = t.w / math.Pow(float64(max(p.total[j], 1)), p.alpha)
		}
	}
	m.setPod(s)
	r := p.rep[[2]int32{s.GPUs, s.Milli}]
	rs := *s
	rs.CPUMilli, rs.MemoryMiB = r[0], r[1]
	p.sl = p.sl[:0]
	for i := range m.model {
		if !m.fits(i, s) {
			continue
		}
		key := (m.cpu[i] - int64(s.CPUMilli)) + 16*(m.freeMilli[i]-s.MilliGPU())
		l, _ := p.loss(i, &rs)
		p.sl = append(p.sl, repCand{l, key, i})
	}
	slices.SortFunc(p.sl, func(a, b repCand) int {
		switch {
		case a.l < b.l-1e-9:
			return -1
		case a.l > b.l+1e-9:
			return 1
		case a.key != b.key:
			return int(a.key - b.key)
		}
		return a.i - b.i
	})
	best, bestGPU := -1, -1
	var bestL float64
	var bestKey int64
	for _, c := range p.sl[:min(p.k, len(p.sl))] {
		l, g := p.loss(c.i, s)
		if best < 0 || l < bestL-1e-9 || l < bestL+1e-9 && c.key < bestKey {
			best, bestGPU, bestL, bestKey = c.i, g, l, c.key
		}
	}
	if best < 0 {
		return false, nil
	}
	m.take(best, s, bestGPU)
	p.before[best] = p.value(m.model[best], m.cpu[best], m.mem[best], m.gpus(best))
	p.store(best)
	return true, nil
}
