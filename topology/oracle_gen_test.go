package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Random inputs for the oracle test: small trees (≤ 1,024 GPUs) with host
// sizes at word edges, and Deltas of 1–3 operations mixing valid and invalid
// ones. Everything is drawn from one *rand.Rand, so a seed replays a run.

// oracleEdgeGPUs are host sizes at word edges.
var oracleEdgeGPUs = []int{0, 1, 2, 4, 8, 63, 64}

// oraclePrios are the priorities of jobs and nominations.
var oraclePrios = []int32{-3, -1, 0, 1, 2, 3, 4, 6, 8, 16, 100, 1 << 20}

func oraclePick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func oracleGPUCount(r *rand.Rand) int {
	if r.IntN(4) == 0 {
		return r.IntN(MaxHostGPUs + 1)
	}
	return oraclePick(r, oracleEdgeGPUs...)
}

// oracleEdgeTrees are fixed trees at word edges: GPU totals of 65, 128, 129,
// 189 and 512, 130 hosts and 130 domains of one level, a CPU-only cluster.
func oracleEdgeTrees() []func() (*Tree, error) {
	hosts := func(levels []string, gpus []int, models ...string) func() (*Tree, error) {
		return func() (*Tree, error) {
			var hs []HostSpec
			for i, n := range gpus {
				path := make([]string, len(levels))
				for l := range path {
					path[l] = fmt.Sprintf("%c%d", 'a'+l, (i*7+l)%3)
				}
				hs = append(hs, HostSpec{Name: fmt.Sprintf("n%d", i), Path: path, GPUs: n,
					Model: models[i%len(models)], CPUMilli: 32000, MemoryMiB: Unlimited})
			}
			return BuildHosts(levels, hs)
		}
	}
	shape := func(sh Shape) func() (*Tree, error) { return func() (*Tree, error) { return BuildShape(sh) } }
	return []func() (*Tree, error){
		hosts([]string{"rack"}, []int{63, 1, 64, 0, 2, 63, 4, 8}, "A", "B"),
		hosts(nil, []int{64, 1}, "A"),
		hosts([]string{"block", "rack"}, []int{64, 64, 1}, "A", "B", ""),
		hosts([]string{"rack"}, []int{1, 63, 64}, "A"),
		hosts([]string{"rack"}, []int{0, 0, 0}, ""),
		shape(Shape{Levels: []string{"block", "rack"}, FanOut: []int{2, 2, 2}, GPUsPerHost: 64, Model: "H100"}),
		shape(Shape{FanOut: []int{3}, GPUsPerHost: 63, CPUMilli: 16000, MemoryMiB: 65536}),
		shape(Shape{Levels: []string{"rack"}, FanOut: []int{130, 1}, GPUsPerHost: 1, CPUMilli: 4000}),
	}
}

// oracleTree draws a tree and a one-line description of it.
func oracleTree(r *rand.Rand) (*Tree, string, error) {
	switch x := r.IntN(10); {
	case x < 2:
		edge := oracleEdgeTrees()
		i := r.IntN(len(edge))
		t, err := edge[i]()
		return t, fmt.Sprintf("edge tree %d", i), err
	case x < 5:
		return oracleShapeTree(r)
	}
	return oracleHostsTree(r)
}

func oracleShapeTree(r *rand.Rand) (*Tree, string, error) {
	L := r.IntN(4)
	sh := Shape{Levels: slices.Clone([]string{"zone", "block", "rack"}[:L]), FanOut: make([]int, L+1)}
	for i := range sh.FanOut {
		sh.FanOut[i] = 1 + r.IntN(4)
	}
	if r.IntN(6) == 0 { // a wide level: idle bitsets cross word edges
		sh.FanOut[r.IntN(L+1)] = 60 + r.IntN(80)
	}
	sh.GPUsPerHost = oracleGPUCount(r)
	for {
		hosts := 1
		for _, f := range sh.FanOut {
			hosts *= f
		}
		if hosts <= 400 && hosts*sh.GPUsPerHost <= 1024 {
			break
		}
		big := 0
		for i, f := range sh.FanOut {
			if f > sh.FanOut[big] {
				big = i
			}
		}
		sh.FanOut[big] = max(1, sh.FanOut[big]/2)
	}
	sh.Model = oraclePick(r, "", "H100", "GB200")
	if r.IntN(2) == 0 {
		sh.CPUMilli = oraclePick[int64](r, 4000, 16000, 64000)
	}
	if r.IntN(2) == 0 {
		sh.MemoryMiB = oraclePick[int64](r, 8192, 65536)
	}
	t, err := BuildShape(sh)
	return t, fmt.Sprintf("shape %+v", sh), err
}

func oracleHostsTree(r *rand.Rand) (*Tree, string, error) {
	L := r.IntN(4)
	levels := slices.Clone([]string{"block", "su", "rack"}[:L])
	width := make([]int, L)
	for l := range width {
		width[l] = 1 + r.IntN(3)
	}
	nh := 1 + r.IntN(30)
	many := r.IntN(8) == 0 // many small hosts: host bitsets cross word edges
	if many {
		nh = 60 + r.IntN(140)
	}
	models := oraclePick(r, []string{"H100"}, []string{"H100", "A100"}, []string{"", "H100", "L4"})
	budget := 1024
	hosts := make([]HostSpec, nh)
	var desc strings.Builder
	fmt.Fprintf(&desc, "hosts levels=%v gpus=[", levels)
	for i := range hosts {
		path := make([]string, L)
		for l := range path {
			path[l] = fmt.Sprintf("%c%d", 'a'+l, r.IntN(width[l]))
		}
		n := oracleGPUCount(r)
		if many {
			n = r.IntN(3)
		}
		n = min(n, budget)
		budget -= n
		cpu, mem := int64(Unlimited), int64(Unlimited)
		if r.IntN(5) > 1 {
			cpu = oraclePick[int64](r, 0, 2000, 8000, 8000, 32000, 32000)
		}
		if r.IntN(5) > 1 {
			mem = oraclePick[int64](r, 0, 4096, 65536, 65536)
		}
		hosts[i] = HostSpec{Name: fmt.Sprintf("n%d", i), Path: path, GPUs: n,
			Model: models[r.IntN(len(models))], CPUMilli: cpu, MemoryMiB: mem}
		fmt.Fprintf(&desc, " %s:%d", strings.Join(path, "/"), n)
	}
	desc.WriteString("]")
	t, err := BuildHosts(levels, hosts)
	return t, desc.String(), err
}

// oracleGen draws Deltas against the model (to aim most operations at
// resources that exist and are free) and the State (for guard generations).
type oracleGen struct {
	r       *rand.Rand
	t       *Tree
	now     int64
	ids     JobID        // ordinary job ids are 0…ids-1
	prevGen []uint32     // host generations before the previous step: old plans
	base    *oracleModel // the model before the Delta being drawn
}

func newOracleGen(r *rand.Rand, t *Tree) *oracleGen {
	return &oracleGen{r: r, t: t, ids: JobID(8 + r.IntN(40))}
}

func (g *oracleGen) delta(m *oracleModel, s *State) Delta {
	r := g.r
	g.now++
	var d Delta
	if r.IntN(100) < 15 {
		for range 1 + r.IntN(2) {
			d.Guards = append(d.Guards, g.guard(s))
		}
	}
	n := 1
	switch x := r.IntN(100); {
	case x < 25:
		n = 2
	case x < 37:
		n = 3
	}
	g.base = m
	sc := m // the model as the Delta's previous operations leave it
	step := func(op Op) {
		d.Ops = append(d.Ops, op)
		if c := sc.clone(); c.op(&op) == nil {
			sc = c
		}
	}
	if r.IntN(25) == 0 { // a slot freed and taken again, then a rollback
		if id, ok := g.liveID(m); ok && r.IntN(2) == 0 {
			step(RemoveJob(id))
			step(g.addJob(sc, id, nil))
		} else if ids := m.nomIDs(); len(ids) > 0 {
			step(CancelNomination(oraclePick(r, ids...)))
			step(g.nominateOp(sc))
		}
		step(g.invalidOp())
		return d
	}
	for range n {
		step(g.op(sc))
	}
	if r.IntN(12) == 0 { // doomed: whatever came before is rolled back
		step(g.invalidOp())
	}
	return d
}

// invalidOp returns an operation that is certainly rejected.
func (g *oracleGen) invalidOp() Op {
	r := g.r
	switch r.IntN(4) {
	case 0:
		return SetHostHealth(HostID(g.t.NumHosts()), Healthy)
	case 1:
		return AddJob(0, Job{})
	case 2:
		return Nominate(Nomination{Job: 1})
	}
	return Op{Kind: 0}
}

func (g *oracleGen) guard(s *State) Guard {
	r, H := g.r, g.t.NumHosts()
	h := HostID(r.IntN(H))
	switch x := r.IntN(100); {
	case x < 4:
		return Guard{Host: oraclePick(r, -1, HostID(H))}
	case x < 18:
		return Guard{Host: h, Gen: s.HostGeneration(h) + 1 + uint32(r.IntN(3))}
	case x < 40 && g.prevGen != nil:
		return Guard{Host: h, Gen: g.prevGen[h]}
	}
	return Guard{Host: h, Gen: s.HostGeneration(h)}
}

func (g *oracleGen) op(m *oracleModel) Op {
	r := g.r
	switch x := r.IntN(100); {
	case x < 34:
		return g.addOp(m)
	case x < 46:
		return g.removeOp(m)
	case x < 52:
		return g.moveOp(m)
	case x < 55:
		return g.replaceOp(m)
	case x < 67:
		return g.nominateOp(m)
	case x < 70:
		if ids := m.nomIDs(); len(ids) > 0 && r.IntN(5) > 0 {
			return CancelNomination(oraclePick(r, ids...))
		}
		return CancelNomination(JobID(r.IntN(int(g.ids))))
	case x < 74:
		return ExpireNominations(g.now + int64(r.IntN(30)) - 10)
	case x < 83:
		return g.gpuHealthOp()
	case x < 92:
		return g.hostHealthOp()
	case x < 97:
		return g.domainHealthOp()
	case x < 98:
		return Op{Kind: oraclePick[OpKind](r, 0, 10, 255), Job: 1}
	}
	return g.addOp(m)
}

// absentID returns a job id with no live job.
func (g *oracleGen) absentID(m *oracleModel) JobID {
	start := g.r.IntN(int(g.ids))
	for i := range int(g.ids) {
		if id := JobID((start + i) % int(g.ids)); m.jobs[id] == nil {
			return id
		}
	}
	return g.ids + JobID(g.r.IntN(300))
}

func (g *oracleGen) liveID(m *oracleModel) (JobID, bool) {
	ids := m.jobIDs()
	if len(ids) == 0 {
		return 0, false
	}
	return oraclePick(g.r, ids...), true
}

func (g *oracleGen) jobInfo(m *oracleModel) Job {
	r := g.r
	info := Job{Priority: oraclePick(r, oraclePrios...), Preemptible: r.IntN(2) == 0, Movable: r.IntN(3) == 0,
		Exclusive: r.IntN(7) == 0}
	if r.IntN(3) == 0 {
		info.HasEnd, info.End = true, g.now+int64(r.IntN(40))-5
		if ids := m.nomIDs(); len(ids) > 0 && r.IntN(2) == 0 { // backfill right at the edge
			info.End = m.noms[oraclePick(r, ids...)].Ready + int64(r.IntN(3)) - 1
		}
	}
	hl := int(g.t.HostLevel())
	info.Required, info.Preferred = Level(r.IntN(hl+2)-1), Level(r.IntN(hl+2)-1)
	switch r.IntN(60) {
	case 0:
		info.Required = Level(hl + 1)
	case 1:
		info.Preferred = -2
	}
	return info
}

// oracleShape is a pod's shape.
type oracleShape struct {
	gpus            int
	milli, cpu, mem int32
}

func (g *oracleGen) shape() oracleShape {
	r := g.r
	var sh oracleShape
	if r.IntN(4) == 0 {
		sh.gpus, sh.milli = 1, oraclePick[int32](r, 100, 250, 333, 500, 750, 999, int32(1+r.IntN(999)))
	} else {
		sh.gpus = oraclePick(r, 0, 1, 1, 2, 2, 4, 8, r.IntN(g.t.MaxHostGPUs()+1))
	}
	sh.cpu = oraclePick[int32](r, 0, 0, 250, 1000, 4000, 16000)
	sh.mem = oraclePick[int32](r, 0, 0, 512, 4096, 65536)
	return sh
}

func (g *oracleGen) addOp(m *oracleModel) Op {
	r := g.r
	var id JobID
	var target *Nomination
	switch x := r.IntN(100); {
	case x < 68:
		id = g.absentID(m)
	case x < 80: // a nominee: it may take its own GPUs, and its nomination goes
		id = g.absentID(m)
		for _, n := range m.nomIDs() {
			if m.jobs[n] == nil {
				id, target = n, m.noms[n]
				break
			}
		}
	case x < 86:
		var ok bool
		if id, ok = g.liveID(m); !ok {
			id = g.absentID(m)
		}
	case x < 92: // a job an earlier operation of this Delta removed
		id = g.absentID(m)
		for _, old := range g.base.jobIDs() {
			if m.jobs[old] == nil {
				id = old
				break
			}
		}
	case x < 95:
		id = 100 + JobID(r.IntN(400))
	case x < 98:
		id = -1
	default:
		id = MaxJobID + 1
	}
	return g.addJob(m, id, target)
}

// addJob draws job id's attributes, pod shapes, pod sets and pods.
func (g *oracleGen) addJob(m *oracleModel, id JobID, target *Nomination) Op {
	r := g.r
	info := g.jobInfo(m)
	n := 1
	if r.IntN(2) == 0 {
		n = 2 + r.IntN(3)
	}
	shapes := make([]oracleShape, n)
	shapes[0] = g.shape()
	for i := 1; i < n; i++ {
		shapes[i] = shapes[0]
		if r.IntN(5) == 0 {
			shapes[i] = g.shape()
		}
	}
	info.Sets = g.sets(shapes)
	return AddJob(id, info, g.place(m, id, &info, shapes, target)...)
}

// sets returns pod sets for the shapes: none, one per run of equal shapes
// (sometimes with an empty set), or corrupt ones.
func (g *oracleGen) sets(shapes []oracleShape) []PodSet {
	r := g.r
	if r.IntN(2) == 0 {
		return nil
	}
	hl := int(g.t.HostLevel())
	var sets []PodSet
	for i := 0; i < len(shapes); {
		j := i
		for j < len(shapes) && shapes[j] == shapes[i] {
			j++
		}
		sh := shapes[i]
		set := PodSet{Count: int32(j - i), GPUs: int32(sh.gpus), Milli: sh.milli, CPUMilli: sh.cpu, MemoryMiB: sh.mem}
		if r.IntN(3) == 0 {
			set.SliceSize, set.SliceLevel = int32(1+r.IntN(2)), Level(r.IntN(hl+1))
		}
		sets = append(sets, set)
		i = j
	}
	if r.IntN(5) == 0 {
		sets = slices.Insert(sets, r.IntN(len(sets)+1), PodSet{GPUs: 3, SliceLevel: NoLevel})
	}
	switch r.IntN(25) {
	case 0:
		sets[0].Count++
	case 1:
		sets[len(sets)-1].Count--
	case 2:
		sets[0].Milli++
	case 3:
		sets[0].SliceLevel = Level(hl + 1)
	case 4:
		sets[0].SliceSize = -1
	}
	return sets
}

// oracleLocal is what the pods drawn so far for one operation take.
type oracleLocal struct {
	milli    map[GPUID]int
	cpu, mem map[HostID]int64
}

// place draws pods of the given shapes for job id: mostly on hosts where they
// fit (on the nomination's hosts when target is set), sometimes anywhere,
// sometimes malformed.
func (g *oracleGen) place(m *oracleModel, id JobID, info *Job, shapes []oracleShape, target *Nomination) []Pod {
	v := m.view()
	loc := oracleLocal{milli: map[GPUID]int{}, cpu: map[HostID]int64{}, mem: map[HostID]int64{}}
	pods := make([]Pod, len(shapes))
	for i, sh := range shapes {
		pods[i] = g.pod(m, v, &loc, id, info, sh, target)
		p := pods[i]
		if p.Host >= 0 && int(p.Host) < g.t.NumHosts() {
			lo, _ := g.t.HostGPUs(p.Host)
			for _, b := range oracleBits(p.GPUs) {
				if p.Milli == 0 {
					loc.milli[lo+GPUID(b)] += FullGPU
				} else {
					loc.milli[lo+GPUID(b)] += int(p.Milli)
				}
			}
			loc.cpu[p.Host] += int64(p.CPUMilli)
			loc.mem[p.Host] += int64(p.MemoryMiB)
		}
		g.corruptPod(&pods[i], v)
	}
	return pods
}

// usable returns the host-local GPUs of h a pod of shape sh of job id could
// take now.
func (g *oracleGen) usable(m *oracleModel, v *oracleView, loc *oracleLocal, id JobID, info *Job, sh oracleShape, h HostID, noms bool) []int {
	lo, hi := g.t.HostGPUs(h)
	var out []int
	for gi := lo; gi < hi; gi++ {
		free := v.milli[gi] - loc.milli[gi]
		switch {
		case m.failed[gi]:
		case sh.milli == 0 && free != FullGPU, sh.milli > 0 && free < int(sh.milli):
		case noms && v.nominee[gi] >= 0 && !oracleMayTake(id, info, m.noms[v.nominee[gi]]):
		default:
			out = append(out, int(gi-lo))
		}
	}
	return out
}

func (g *oracleGen) pod(m *oracleModel, v *oracleView, loc *oracleLocal, id JobID, info *Job, sh oracleShape, target *Nomination) Pod {
	r, t := g.r, g.t
	p := Pod{Milli: sh.milli, CPUMilli: sh.cpu, MemoryMiB: sh.mem}
	noms := r.IntN(5) > 0 // mostly respect nominations
	var cands []HostID
	var onTarget []HostID
	for hi := range t.NumHosts() {
		h := HostID(hi)
		switch {
		case m.health[h] != Healthy:
			continue
		case v.hostExcl[h] >= 0 && v.hostExcl[h] != id:
			continue
		case info.Exclusive && len(v.hostJobs[h]) > 0 && !(len(v.hostJobs[h]) == 1 && v.hostJobs[h][0] == id):
			continue
		case v.hostCPU[h]-loc.cpu[h] < int64(sh.cpu), v.hostMem[h]-loc.mem[h] < int64(sh.mem):
			continue
		case len(g.usable(m, v, loc, id, info, sh, h, noms)) < sh.gpus:
			continue
		}
		cands = append(cands, h)
		if target != nil {
			lo, hiG := t.HostGPUs(h)
			for _, gi := range target.GPUs {
				if gi >= lo && gi < hiG {
					onTarget = append(onTarget, h)
					break
				}
			}
		}
	}
	if len(onTarget) > 0 && r.IntN(4) > 0 {
		cands = onTarget
	}
	if len(cands) == 0 || r.IntN(12) == 0 { // anywhere: often busy or unhealthy
		p.Host = HostID(r.IntN(t.NumHosts()))
		n := t.HostGPUCount(p.Host)
		for _, i := range r.Perm(n)[:min(n, sh.gpus)] {
			p.GPUs |= 1 << uint(i)
		}
		return p
	}
	p.Host = oraclePick(r, cands...)
	free := g.usable(m, v, loc, id, info, sh, p.Host, noms)
	for _, k := range r.Perm(len(free))[:sh.gpus] {
		p.GPUs |= 1 << uint(free[k])
	}
	return p
}

// corruptPod sometimes makes a pod malformed or aims it at a busy GPU.
func (g *oracleGen) corruptPod(p *Pod, v *oracleView) {
	r, t := g.r, g.t
	if r.IntN(25) > 0 {
		return
	}
	switch r.IntN(7) {
	case 0:
		p.Host = oraclePick(r, -1, HostID(t.NumHosts()))
	case 1:
		if p.Host >= 0 && int(p.Host) < t.NumHosts() {
			if n := t.HostGPUCount(p.Host); n < MaxHostGPUs {
				p.GPUs |= 1 << uint(n+r.IntN(MaxHostGPUs-n))
			}
		}
	case 2:
		p.Milli = oraclePick[int32](r, -1, FullGPU, 1500)
	case 3:
		p.Milli = max(p.Milli, 1)
		p.GPUs |= 3
	case 4:
		p.CPUMilli = -1
	case 5: // a busy GPU of the pod's host
		if p.Host >= 0 && int(p.Host) < t.NumHosts() {
			lo, hi := t.HostGPUs(p.Host)
			for gi := lo; gi < hi; gi++ {
				if v.milli[gi] < FullGPU {
					p.GPUs |= 1 << uint(gi-lo)
					break
				}
			}
		}
	case 6:
		p.MemoryMiB = Unlimited
	}
}

func (g *oracleGen) removeOp(m *oracleModel) Op {
	r := g.r
	if id, ok := g.liveID(m); ok && r.IntN(7) > 0 {
		return RemoveJob(id)
	}
	if r.IntN(10) == 0 {
		return RemoveJob(-1)
	}
	return RemoveJob(JobID(r.IntN(int(g.ids) + 5)))
}

func (g *oracleGen) moveOp(m *oracleModel) Op {
	r := g.r
	id, ok := g.liveID(m)
	if !ok || r.IntN(20) == 0 {
		return MoveJob(JobID(r.IntN(int(g.ids))), Pod{Host: 0})
	}
	j := m.jobs[id]
	shapes := make([]oracleShape, len(j.pods))
	for i, p := range j.pods {
		shapes[i] = oracleShape{gpus: len(oracleBits(p.GPUs)), milli: p.Milli, cpu: p.CPUMilli, mem: p.MemoryMiB}
	}
	without := m.clone() // the job's own pods are released before the new ones are taken
	without.jobs[id].pods = nil
	pods := g.place(without, id, &j.info, shapes, nil)
	for i := range pods {
		if r.IntN(5) == 0 { // stay: overlap with the old pods
			pods[i] = j.pods[i]
		}
	}
	switch r.IntN(18) {
	case 0:
		pods = pods[:len(pods)-1]
	case 1:
		pods = append(pods, pods[0])
	case 2:
		pods[r.IntN(len(pods))].CPUMilli++
	case 3:
		if p := &pods[r.IntN(len(pods))]; p.Milli > 0 {
			p.Milli = oraclePick[int32](r, 0, p.Milli%999+1)
		} else if p.NumGPUs() == 1 {
			p.Milli = 500
		}
	case 4:
		pods[0].GPUs = 0
		if j.pods[0].GPUs == 0 {
			pods[0].GPUs = 1
		}
	}
	return MoveJob(id, pods...)
}

func (g *oracleGen) nominateOp(m *oracleModel) Op {
	r, t := g.r, g.t
	var id JobID
	switch x := r.IntN(100); {
	case x < 45:
		id = g.absentID(m)
	case x < 70:
		var ok bool
		if id, ok = g.liveID(m); !ok {
			id = g.absentID(m)
		}
	case x < 82:
		if ids := m.nomIDs(); len(ids) > 0 {
			id = oraclePick(r, ids...)
		}
	case x < 85:
		id = -1
	default:
		id = JobID(r.IntN(int(g.ids)))
	}
	var gpus []GPUID
	for k := 0; k == 0 || k < 2 && r.IntN(4) == 0; k++ {
		h := HostID(r.IntN(t.NumHosts()))
		if r.IntN(2) == 0 { // a host with pods: a preemptor waiting for victims
			if busy := g.busyHosts(m); len(busy) > 0 {
				h = oraclePick(r, busy...)
			}
		}
		lo, hi := t.HostGPUs(h)
		n := int(hi - lo)
		for _, i := range r.Perm(n)[:min(n, 1+r.IntN(6))] {
			gpus = append(gpus, lo+GPUID(i))
		}
	}
	slices.Sort(gpus)
	gpus = slices.Compact(gpus)
	if r.IntN(12) == 0 {
		switch r.IntN(5) {
		case 0:
			gpus = nil
		case 1:
			if len(gpus) > 1 {
				gpus[0], gpus[1] = gpus[1], gpus[0]
			}
		case 2:
			if len(gpus) > 0 {
				gpus = append(gpus, gpus[len(gpus)-1])
			}
		case 3:
			gpus = append(gpus, GPUID(t.NumGPUs()))
		case 4:
			gpus = append([]GPUID{-1}, gpus...)
		}
	}
	return Nominate(Nomination{Job: id, Priority: oraclePick(r, oraclePrios...), Ready: g.now + int64(r.IntN(25)),
		Expiry: g.now + int64(r.IntN(80)), GPUs: gpus})
}

func (g *oracleGen) busyHosts(m *oracleModel) []HostID {
	var out []HostID
	for _, id := range m.jobIDs() {
		for _, p := range m.jobs[id].pods {
			if g.t.HostGPUCount(p.Host) > 0 {
				out = append(out, p.Host)
			}
		}
	}
	return out
}

func (g *oracleGen) health(gpu bool) Health {
	r := g.r
	switch x := r.IntN(100); {
	case x < 55:
		return Healthy
	case x < 75 && !gpu:
		return Draining
	case x < 96:
		return Failed
	case x < 98:
		return Draining // invalid for a GPU
	}
	return Health(3 + r.IntN(3))
}

func (g *oracleGen) gpuHealthOp() Op {
	r, G := g.r, g.t.NumGPUs()
	if G == 0 || r.IntN(30) == 0 {
		return SetGPUHealth(oraclePick(r, -1, GPUID(G)), Failed)
	}
	return SetGPUHealth(GPUID(r.IntN(G)), g.health(true))
}

func (g *oracleGen) hostHealthOp() Op {
	r, H := g.r, g.t.NumHosts()
	if r.IntN(30) == 0 {
		return SetHostHealth(oraclePick(r, -1, HostID(H)), Healthy)
	}
	return SetHostHealth(HostID(r.IntN(H)), g.health(false))
}

func (g *oracleGen) domainHealthOp() Op {
	r, D := g.r, g.t.NumDomains()
	if r.IntN(30) == 0 {
		return SetDomainHealth(oraclePick(r, -1, DomainID(D)), Healthy)
	}
	d := DomainID(r.IntN(D))
	if d == 0 && D > 1 && r.IntN(3) > 0 { // the root rarely
		d = DomainID(1 + r.IntN(D-1))
	}
	return SetDomainHealth(d, g.health(false))
}

// oracleDelta renders a Delta for failure messages.
func oracleDelta(d Delta) string {
	var b strings.Builder
	for _, gd := range d.Guards {
		fmt.Fprintf(&b, "\n  guard host %d gen %d", gd.Host, gd.Gen)
	}
	for i, op := range d.Ops {
		fmt.Fprintf(&b, "\n  op %d: %s", i, op.Kind)
		switch op.Kind {
		case OpAddJob:
			fmt.Fprintf(&b, " job %d %+v", op.Job, op.Info)
			fallthrough
		case OpMoveJob:
			if op.Kind == OpMoveJob {
				fmt.Fprintf(&b, " job %d", op.Job)
			}
			for _, p := range op.Pods {
				fmt.Fprintf(&b, "\n    pod host %d gpus %#x milli %d cpu %d mem %d", p.Host, p.GPUs, p.Milli, p.CPUMilli, p.MemoryMiB)
			}
		case OpNominate:
			fmt.Fprintf(&b, " %+v", op.Nomination)
		case OpRemoveJob, OpCancelNomination:
			fmt.Fprintf(&b, " job %d", op.Job)
		case OpExpireNominations:
			fmt.Fprintf(&b, " now %d", op.Now)
		case OpSetGPUHealth:
			fmt.Fprintf(&b, " GPU %d %s", op.GPU, op.Health)
		case OpSetHostHealth:
			fmt.Fprintf(&b, " host %d %s", op.Host, op.Health)
		case OpSetDomainHealth:
			fmt.Fprintf(&b, " domain %d %s", op.Domain, op.Health)
		}
	}
	return b.String()
}

// replaceOp re-places a random subset of a live job's pods (sometimes
// malformed: ranks out of order or range, a shape change).
func (g *oracleGen) replaceOp(m *oracleModel) Op {
	r := g.r
	id, ok := g.liveID(m)
	if !ok || r.IntN(20) == 0 {
		return ReplacePods(JobID(r.IntN(int(g.ids))), []int32{0}, Pod{Host: 0})
	}
	j := m.jobs[id]
	var ranks []int32
	var shapes []oracleShape
	for i, p := range j.pods {
		if r.IntN(2) == 0 || i == len(j.pods)-1 && len(ranks) == 0 {
			ranks = append(ranks, int32(i))
			shapes = append(shapes, oracleShape{gpus: len(oracleBits(p.GPUs)), milli: p.Milli, cpu: p.CPUMilli, mem: p.MemoryMiB})
		}
	}
	without := m.clone() // the replaced pods are released before the new ones are taken
	var kept []Pod
	for i, p := range j.pods {
		if !slices.Contains(ranks, int32(i)) {
			kept = append(kept, p)
		}
	}
	without.jobs[id].pods = kept
	pods := g.place(without, id, &j.info, shapes, nil)
	for i := range pods {
		if r.IntN(5) == 0 { // stay where it is
			pods[i] = j.pods[ranks[i]]
		}
	}
	switch r.IntN(15) {
	case 0:
		ranks = append(ranks, ranks[0])
		pods = append(pods, pods[0])
	case 1:
		ranks[len(ranks)-1] = int32(len(j.pods))
	case 2:
		pods[r.IntN(len(pods))].CPUMilli++
	}
	return ReplacePods(id, ranks, pods...)
}
