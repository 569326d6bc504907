package topology

import (
	"errors"
	"fmt"
	"slices"
)

// The oracle: a deliberately simple model of a State — maps and plain
// slices, no aggregates, no bit kernels — that implements the semantics of
// the package doc and issue 2 directly. Every query is recomputed from the
// jobs, their pods, the nominations and the health flags (oracleView), and
// every operation is a straight reading of its documentation. oracle_test.go
// runs it side by side with State.Apply.

// oracleJob is a job of the model: its attributes and its pods in rank order.
type oracleJob struct {
	info Job
	pods []Pod
}

// oracleModel holds only primary data.
type oracleModel struct {
	t       *Tree
	gpuHost []HostID // host of each GPU (from the Tree's GPU ranges)
	failed  []bool   // per GPU
	health  []Health // per host
	jobs    map[JobID]*oracleJob
	noms    map[JobID]*Nomination
	bound   JobID // one more than the largest job id of any accepted Delta
}

func newOracleModel(t *Tree) *oracleModel {
	m := &oracleModel{
		t:       t,
		gpuHost: make([]HostID, t.NumGPUs()),
		failed:  make([]bool, t.NumGPUs()),
		health:  make([]Health, t.NumHosts()),
		jobs:    map[JobID]*oracleJob{},
		noms:    map[JobID]*Nomination{},
	}
	for h := range t.NumHosts() {
		lo, hi := t.HostGPUs(HostID(h))
		for g := lo; g < hi; g++ {
			m.gpuHost[g] = HostID(h)
		}
	}
	return m
}

func (m *oracleModel) clone() *oracleModel {
	c := &oracleModel{
		t:       m.t,
		gpuHost: m.gpuHost, // immutable
		failed:  slices.Clone(m.failed),
		health:  slices.Clone(m.health),
		jobs:    make(map[JobID]*oracleJob, len(m.jobs)),
		noms:    make(map[JobID]*Nomination, len(m.noms)),
		bound:   m.bound,
	}
	for id, j := range m.jobs {
		info := j.info
		info.Sets = slices.Clone(info.Sets)
		c.jobs[id] = &oracleJob{info: info, pods: slices.Clone(j.pods)}
	}
	for id, n := range m.noms {
		nn := *n
		nn.GPUs = slices.Clone(n.GPUs)
		c.noms[id] = &nn
	}
	return c
}

// jobIDs returns the live jobs, ascending (never range over the maps where
// order matters: the generator must be reproducible from its seed).
func (m *oracleModel) jobIDs() []JobID {
	ids := make([]JobID, 0, len(m.jobs))
	for id := range m.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// nomIDs returns the nominees, ascending.
func (m *oracleModel) nomIDs() []JobID {
	ids := make([]JobID, 0, len(m.noms))
	for id := range m.noms {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// oracleBits returns the indices of the set bits of mask, ascending.
func oracleBits(mask uint64) []int {
	var out []int
	for i := range 64 {
		if mask>>uint(i)&1 == 1 {
			out = append(out, i)
		}
	}
	return out
}

// oraclePod is a pod seen from its host.
type oraclePod struct {
	job  JobID
	rank int
	pod  Pod
}

func (m *oracleModel) podsOn(h HostID) []oraclePod {
	var out []oraclePod
	for id, j := range m.jobs {
		for rank, p := range j.pods {
			if p.Host == h {
				out = append(out, oraclePod{id, rank, p})
			}
		}
	}
	return out
}

// usedMilli is the milli-GPU of GPU g that pods hold (a whole-GPU pod holds
// FullGPU).
func (m *oracleModel) usedMilli(g GPUID) int {
	h := m.gpuHost[g]
	lo, _ := m.t.HostGPUs(h)
	used := 0
	for _, op := range m.podsOn(h) {
		for _, i := range oracleBits(op.pod.GPUs) {
			if lo+GPUID(i) == g {
				if op.pod.Milli == 0 {
					used += FullGPU
				} else {
					used += int(op.pod.Milli)
				}
			}
		}
	}
	return used
}

func (m *oracleModel) cpuMemFree(h HostID) (cpu, mem int64) {
	cpu, mem = int64(m.t.HostCPU(h)), int64(m.t.HostMemory(h))
	for _, op := range m.podsOn(h) {
		cpu -= int64(op.pod.CPUMilli)
		mem -= int64(op.pod.MemoryMiB)
	}
	return cpu, mem
}

// nominationOf returns the nomination holding GPU g, or nil.
func (m *oracleModel) nominationOf(g GPUID) *Nomination {
	for _, n := range m.noms {
		if slices.Contains(n.GPUs, g) {
			return n
		}
	}
	return nil
}

// oracleMayTake: the nominee, a strictly higher priority, or a job expected
// to end by the nomination's ready time.
func oracleMayTake(id JobID, info *Job, n *Nomination) bool {
	return n.Job == id || info.Priority > n.Priority || (info.HasEnd && info.End <= n.Ready)
}

func oracleInvalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

func oracleStalef(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrStale}, args...)...)
}

// checkPod decides whether pod p of job id (attributes info) may be placed now.
func (m *oracleModel) checkPod(id JobID, info *Job, p Pod) error {
	t := m.t
	h := p.Host
	if h < 0 || int(h) >= t.NumHosts() {
		return oracleInvalidf("host %d out of range", h)
	}
	lo, hi := t.HostGPUs(h)
	n := int(hi - lo)
	gpus := oracleBits(p.GPUs)
	for _, i := range gpus {
		if i >= n {
			return oracleInvalidf("GPU %d of a %d-GPU host", i, n)
		}
	}
	switch {
	case p.Milli < 0 || p.Milli >= FullGPU:
		return oracleInvalidf("milli %d", p.Milli)
	case p.Milli > 0 && len(gpus) != 1:
		return oracleInvalidf("fractional pod on %d GPUs", len(gpus))
	case p.CPUMilli < 0 || p.MemoryMiB < 0:
		return oracleInvalidf("negative CPU or memory")
	case m.health[h] != Healthy:
		return oracleStalef("host %d is %s", h, m.health[h])
	}
	for _, op := range m.podsOn(h) {
		if op.job == id {
			continue
		}
		if info.Exclusive {
			return oracleStalef("exclusive job, host %d holds job %d", h, op.job)
		}
		if m.jobs[op.job].info.Exclusive {
			return oracleStalef("host %d held exclusively by job %d", h, op.job)
		}
	}
	cpu, mem := m.cpuMemFree(h)
	if int64(p.CPUMilli) > cpu || int64(p.MemoryMiB) > mem {
		return oracleStalef("host %d has CPU %d, memory %d", h, cpu, mem)
	}
	for _, i := range gpus {
		g := lo + GPUID(i)
		used := m.usedMilli(g)
		switch {
		case m.failed[g]:
			return oracleStalef("GPU %d failed", g)
		case p.Milli == 0 && used != 0:
			return oracleStalef("GPU %d in use (%d milli)", g, used)
		case p.Milli > 0 && FullGPU-used < int(p.Milli):
			return oracleStalef("GPU %d has %d milli free", g, FullGPU-used)
		}
	}
	claim := gpus
	if info.Exclusive {
		claim = nil
		for i := range n {
			claim = append(claim, i)
		}
	}
	for _, i := range claim {
		if nom := m.nominationOf(lo + GPUID(i)); nom != nil && !oracleMayTake(id, info, nom) {
			return oracleStalef("GPU %d nominated for job %d", lo+GPUID(i), nom.Job)
		}
	}
	return nil
}

func (m *oracleModel) validateJob(info *Job, pods []Pod) error {
	if len(pods) == 0 {
		return oracleInvalidf("no pods")
	}
	hl := m.t.HostLevel()
	for _, l := range []Level{info.Required, info.Preferred} {
		if l < NoLevel || l > hl {
			return oracleInvalidf("level %d", l)
		}
	}
	rank := 0
	for _, set := range info.Sets {
		if set.Count < 0 || int(set.Count) > len(pods)-rank {
			return oracleInvalidf("set count %d", set.Count)
		}
		if set.SliceLevel < NoLevel || set.SliceLevel > hl || set.SliceSize < 0 {
			return oracleInvalidf("slice %d at level %d", set.SliceSize, set.SliceLevel)
		}
		for range set.Count {
			p := pods[rank]
			if len(oracleBits(p.GPUs)) != int(set.GPUs) || p.Milli != set.Milli ||
				p.CPUMilli != set.CPUMilli || p.MemoryMiB != set.MemoryMiB {
				return oracleInvalidf("pod %d is not of its set's shape", rank)
			}
			rank++
		}
	}
	if len(info.Sets) > 0 && rank != len(pods) {
		return oracleInvalidf("sets count %d pods of %d", rank, len(pods))
	}
	return nil
}

func (m *oracleModel) addJob(id JobID, info Job, pods []Pod) error {
	if m.jobs[id] != nil {
		return oracleStalef("job %d present", id)
	}
	if err := m.validateJob(&info, pods); err != nil {
		return err
	}
	delete(m.noms, id) // the nominee is placed: its reservation goes
	info.Sets = slices.Clone(info.Sets)
	j := &oracleJob{info: info}
	m.jobs[id] = j
	for i, p := range pods {
		if err := m.checkPod(id, &j.info, p); err != nil {
			return fmt.Errorf("pod %d: %w", i, err)
		}
		j.pods = append(j.pods, p)
	}
	return nil
}

func (m *oracleModel) moveJob(id JobID, pods []Pod) error {
	j := m.jobs[id]
	if j == nil {
		return oracleStalef("job %d absent", id)
	}
	if len(pods) != len(j.pods) {
		return oracleInvalidf("move of %d pods, job has %d", len(pods), len(j.pods))
	}
	for i, p := range pods {
		o := j.pods[i]
		if len(oracleBits(o.GPUs)) != len(oracleBits(p.GPUs)) || o.Milli != p.Milli ||
			o.CPUMilli != p.CPUMilli || o.MemoryMiB != p.MemoryMiB {
			return oracleInvalidf("pod %d changes shape", i)
		}
	}
	j.pods = nil
	for i, p := range pods {
		if err := m.checkPod(id, &j.info, p); err != nil {
			return fmt.Errorf("pod %d: %w", i, err)
		}
		j.pods = append(j.pods, p)
	}
	return nil
}

// replacePods re-places the pods at ranks: those pods are released, the
// others stay, then each replacement is checked and taken in turn.
func (m *oracleModel) replacePods(id JobID, ranks []int32, pods []Pod) error {
	j := m.jobs[id]
	if j == nil {
		return oracleStalef("job %d absent", id)
	}
	if len(ranks) != len(pods) || len(ranks) == 0 {
		return oracleInvalidf("%d ranks, %d pods", len(ranks), len(pods))
	}
	listed := map[int32]bool{}
	for i, r := range ranks {
		if r < 0 || int(r) >= len(j.pods) || i > 0 && r <= ranks[i-1] {
			return oracleInvalidf("ranks %v", ranks)
		}
		o, p := j.pods[r], pods[i]
		if len(oracleBits(o.GPUs)) != len(oracleBits(p.GPUs)) || o.Milli != p.Milli ||
			o.CPUMilli != p.CPUMilli || o.MemoryMiB != p.MemoryMiB {
			return oracleInvalidf("pod %d changes shape", r)
		}
		listed[r] = true
	}
	all := j.pods
	j.pods = nil
	for r, p := range all {
		if !listed[int32(r)] {
			j.pods = append(j.pods, p)
		}
	}
	for i, p := range pods {
		if err := m.checkPod(id, &j.info, p); err != nil {
			return fmt.Errorf("pod %d: %w", ranks[i], err)
		}
		j.pods = append(j.pods, p)
	}
	out := append([]Pod(nil), all...)
	for i, r := range ranks {
		out[r] = pods[i]
	}
	j.pods = out
	return nil
}

func (m *oracleModel) nominate(n Nomination) error {
	if m.noms[n.Job] != nil {
		return oracleStalef("job %d holds a nomination", n.Job)
	}
	if len(n.GPUs) == 0 {
		return oracleInvalidf("no GPUs")
	}
	for i, g := range n.GPUs {
		switch {
		case g < 0 || int(g) >= m.t.NumGPUs():
			return oracleInvalidf("GPU %d out of range", g)
		case i > 0 && g <= n.GPUs[i-1]:
			return oracleInvalidf("GPUs not ascending")
		case m.nominationOf(g) != nil:
			return oracleStalef("GPU %d nominated", g)
		case m.failed[g]:
			return oracleStalef("GPU %d failed", g)
		case m.health[m.gpuHost[g]] != Healthy:
			return oracleStalef("GPU %d on a %s host", g, m.health[m.gpuHost[g]])
		}
	}
	n.GPUs = slices.Clone(n.GPUs)
	m.noms[n.Job] = &n
	return nil
}

// inDomain reports whether host h lies under domain d (walking parents).
func (m *oracleModel) inDomain(h HostID, d DomainID) bool {
	for a := m.t.HostParent(h); a >= 0; a = m.t.Parent(a) {
		if a == d {
			return true
		}
	}
	return false
}

// op applies one operation. On error the model may be half-changed: callers
// work on a clone.
func (m *oracleModel) op(op *Op) error {
	t := m.t
	switch op.Kind {
	case OpAddJob:
		return m.addJob(op.Job, op.Info, op.Pods)
	case OpRemoveJob:
		if m.jobs[op.Job] == nil {
			return oracleStalef("job %d absent", op.Job)
		}
		delete(m.jobs, op.Job)
		return nil
	case OpMoveJob:
		return m.moveJob(op.Job, op.Pods)
	case OpReplacePods:
		return m.replacePods(op.Job, op.Ranks, op.Pods)
	case OpNominate:
		return m.nominate(op.Nomination)
	case OpCancelNomination:
		if m.noms[op.Job] == nil {
			return oracleStalef("job %d holds no nomination", op.Job)
		}
		delete(m.noms, op.Job)
		return nil
	case OpExpireNominations:
		for id, n := range m.noms {
			if n.Expiry <= op.Now {
				delete(m.noms, id)
			}
		}
		return nil
	case OpSetGPUHealth:
		if op.GPU < 0 || int(op.GPU) >= t.NumGPUs() {
			return oracleInvalidf("GPU %d out of range", op.GPU)
		}
		if op.Health != Healthy && op.Health != Failed {
			return oracleInvalidf("GPU health %d", op.Health)
		}
		m.failed[op.GPU] = op.Health == Failed
		return nil
	case OpSetHostHealth:
		if op.Host < 0 || int(op.Host) >= t.NumHosts() {
			return oracleInvalidf("host %d out of range", op.Host)
		}
		if op.Health > Failed {
			return oracleInvalidf("health %d", op.Health)
		}
		m.health[op.Host] = op.Health
		return nil
	case OpSetDomainHealth:
		if op.Domain < 0 || int(op.Domain) >= t.NumDomains() {
			return oracleInvalidf("domain %d out of range", op.Domain)
		}
		if op.Health > Failed {
			return oracleInvalidf("health %d", op.Health)
		}
		for h := range t.NumHosts() {
			if m.inDomain(HostID(h), op.Domain) {
				m.health[h] = op.Health
			}
		}
		return nil
	}
	return oracleInvalidf("operation kind %d", op.Kind)
}

// oracleOpJob returns the job id an operation names, if it names one.
func oracleOpJob(op *Op) (JobID, bool) {
	switch op.Kind {
	case OpAddJob, OpRemoveJob, OpMoveJob, OpReplacePods, OpCancelNomination:
		return op.Job, true
	case OpNominate:
		return op.Nomination.Job, true
	}
	return 0, false
}

// try decides a Delta: it returns the model after it, or the reason it is
// rejected (wrapping ErrInvalid or ErrStale). gen gives a host's current
// generation (read from the State: the model does not track generations).
// m is unchanged.
func (m *oracleModel) try(d Delta, gen func(HostID) uint32) (*oracleModel, error) {
	for i, g := range d.Guards {
		if g.Host < 0 || int(g.Host) >= m.t.NumHosts() {
			return nil, oracleInvalidf("guard %d: host %d out of range", i, g.Host)
		}
		if gen(g.Host) != g.Gen {
			return nil, oracleStalef("guard %d: host %d changed", i, g.Host)
		}
	}
	maxID := JobID(-1)
	for i := range d.Ops {
		if id, ok := oracleOpJob(&d.Ops[i]); ok {
			if id < 0 || id > MaxJobID {
				return nil, oracleInvalidf("op %d: job id %d", i, id)
			}
			maxID = max(maxID, id)
		}
	}
	c := m.clone()
	for i := range d.Ops {
		if err := c.op(&d.Ops[i]); err != nil {
			return nil, fmt.Errorf("op %d (%s): %w", i, d.Ops[i].Kind, err)
		}
	}
	c.bound = max(c.bound, maxID+1)
	return c, nil
}

// oracleRejected reports whether err is one of the package's rejections.
func oracleRejected(err error) bool {
	return errors.Is(err, ErrInvalid) || errors.Is(err, ErrStale)
}
