package whatif

import (
	"fmt"

	"github.com/blinksched/blink/topology"
)

// Cluster is a scenario's cluster as the engine sees it: the Tree, the State
// with the running jobs applied (job i of the scenario is topology.JobID i)
// and the failed and draining hosts set, and the job names by id.
type Cluster struct {
	Tree  *topology.Tree
	State *topology.State
	Jobs  []string // job names by JobID
}

// Build checks the scenario's cluster against the rules of the format and
// builds it: the Tree with topology.BuildHosts, then one topology.AddJob per
// running job in input order, then the hosts' health. Errors wrap ErrInvalid
// and name the offending host, job or pod.
func (sc *Scenario) Build() (*Cluster, error) {
	specs, err := sc.hostSpecs()
	if err != nil {
		return nil, err
	}
	t, err := topology.BuildHosts(sc.Levels, specs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	c := &Cluster{Tree: t, State: topology.NewState(t), Jobs: make([]string, len(sc.Jobs))}
	u := newUsage(t)
	infos := make([]topology.Job, len(sc.Jobs))
	pods := make([][]topology.Pod, len(sc.Jobs))
	names := map[string]bool{}
	for i := range sc.Jobs {
		j := &sc.Jobs[i]
		where := fmt.Sprintf("jobs[%d] (%q)", i, j.Name)
		switch {
		case j.Name == "":
			return nil, fmt.Errorf("%w: jobs[%d] has no name", ErrInvalid, i)
		case names[j.Name]:
			return nil, fmt.Errorf("%w: %s: duplicate job name", ErrInvalid, where)
		}
		names[j.Name] = true
		c.Jobs[i] = j.Name
		if infos[i], err = jobInfo(t, j); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, where, err)
		}
		if pods[i], err = u.addJob(j); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, where, err)
		}
		if err := keepsLevel(t, pods[i], infos[i].Required); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, where, err)
		}
	}
	health, err := sc.health(t)
	if err != nil {
		return nil, err
	}
	for i := range sc.Jobs {
		op := topology.AddJob(topology.JobID(i), infos[i], pods[i]...)
		if err := c.State.Apply(topology.Delta{Ops: []topology.Op{op}}); err != nil {
			return nil, fmt.Errorf("%w: jobs[%d] (%q): %w", ErrInvalid, i, sc.Jobs[i].Name, err)
		}
	}
	for _, op := range health {
		if err := c.State.Apply(topology.Delta{Ops: []topology.Op{op}}); err != nil {
			return nil, fmt.Errorf("%w: host %q: %w", ErrInvalid, t.HostName(op.Host), err)
		}
	}
	return c, nil
}

// hostSpecs checks the hosts' names and GPU counts and converts them;
// BuildHosts checks paths, levels and ranges.
func (sc *Scenario) hostSpecs() ([]topology.HostSpec, error) {
	if len(sc.Hosts) == 0 {
		return nil, fmt.Errorf("%w: no hosts", ErrInvalid)
	}
	specs := make([]topology.HostSpec, len(sc.Hosts))
	names := make(map[string]bool, len(sc.Hosts))
	for i := range sc.Hosts {
		h := &sc.Hosts[i]
		switch {
		case h.Name == "":
			return nil, fmt.Errorf("%w: hosts[%d] has no name", ErrInvalid, i)
		case names[h.Name]:
			return nil, fmt.Errorf("%w: hosts[%d] (%q): duplicate host name", ErrInvalid, i, h.Name)
		case h.GPUs == nil:
			return nil, fmt.Errorf("%w: hosts[%d] (%q): gpus is missing", ErrInvalid, i, h.Name)
		}
		names[h.Name] = true
		specs[i] = topology.HostSpec{Name: h.Name, Path: h.Path, GPUs: *h.GPUs, Model: h.Model,
			CPUMilli: topology.Unlimited, MemoryMiB: topology.Unlimited}
		if h.CPUMilli != nil {
			specs[i].CPUMilli = *h.CPUMilli
		}
		if h.MemoryMiB != nil {
			specs[i].MemoryMiB = *h.MemoryMiB
		}
	}
	return specs, nil
}

// health returns the operations setting the failed and draining hosts.
func (sc *Scenario) health(t *topology.Tree) ([]topology.Op, error) {
	var ops []topology.Op
	state := map[string]string{}
	for _, list := range []struct {
		key    string
		names  []string
		health topology.Health
	}{{"failed", sc.Failed, topology.Failed}, {"draining", sc.Draining, topology.Draining}} {
		for i, name := range list.names {
			h, ok := t.HostByName(name)
			switch prev := state[name]; {
			case !ok:
				return nil, fmt.Errorf("%w: %s[%d]: unknown host %q", ErrInvalid, list.key, i, name)
			case prev == list.key:
				return nil, fmt.Errorf("%w: %s[%d]: host %q listed twice", ErrInvalid, list.key, i, name)
			case prev != "":
				return nil, fmt.Errorf("%w: %s[%d]: host %q is both %s and %s", ErrInvalid, list.key, i, name, prev, list.key)
			}
			state[name] = list.key
			ops = append(ops, topology.SetHostHealth(h, list.health))
		}
	}
	return ops, nil
}

// jobInfo converts a running job's attributes.
func jobInfo(t *topology.Tree, j *Job) (topology.Job, error) {
	info := topology.Job{Priority: j.Priority, Preemptible: j.Preemptible, Movable: j.Movable == nil || *j.Movable,
		Required: topology.NoLevel, Preferred: topology.NoLevel}
	if j.RequiredLevel != "" {
		l, ok := t.LevelByName(j.RequiredLevel)
		if !ok {
			return info, fmt.Errorf("unknown requiredLevel %q%s", j.RequiredLevel, levelList(t))
		}
		info.Required = l
	}
	if len(j.Pods) == 0 {
		return info, fmt.Errorf("no pods")
	}
	return info, nil
}

// levelList is " (levels: a, b, host)" for error messages.
func levelList(t *topology.Tree) string {
	s := " (levels:"
	for l := topology.Level(1); l <= t.HostLevel(); l++ {
		if l > 1 {
			s += ","
		}
		s += " " + t.LevelName(l)
	}
	return s + ")"
}

// keepsLevel checks that pods lie inside one domain of level l (NoLevel: no
// constraint).
func keepsLevel(t *topology.Tree, pods []topology.Pod, l topology.Level) error {
	if l <= 0 {
		return nil
	}
	first := pods[0].Host
	for i, p := range pods[1:] {
		same := p.Host == first
		if l < t.HostLevel() {
			same = t.HostDomain(p.Host, l) == t.HostDomain(first, l)
		}
		if !same {
			return fmt.Errorf("pod %d on host %q and pod 0 on host %q are not in one %s, breaking the job's requiredLevel",
				i+1, t.HostName(p.Host), t.HostName(first), t.LevelName(l))
		}
	}
	return nil
}

// usage tracks what the running pods take, per host, to report conflicts by
// name before the State sees them.
type usage struct {
	t     *topology.Tree
	whole map[topology.GPUID]string // who uses a GPU whole
	milli map[topology.GPUID]int32  // shared milli in use
	share map[topology.GPUID]string // the first pod sharing a GPU
	cpu   []int64
	mem   []int64
}

func newUsage(t *topology.Tree) *usage {
	return &usage{t: t, whole: map[topology.GPUID]string{}, milli: map[topology.GPUID]int32{},
		share: map[topology.GPUID]string{}, cpu: make([]int64, t.NumHosts()), mem: make([]int64, t.NumHosts())}
}

// addJob checks job j's pods against the hosts and the pods before them, and
// returns them as topology pods.
func (u *usage) addJob(j *Job) ([]topology.Pod, error) {
	out := make([]topology.Pod, len(j.Pods))
	for k := range j.Pods {
		p, err := u.addPod(&j.Pods[k], fmt.Sprintf("job %q pod %d", j.Name, k))
		if err != nil {
			return nil, fmt.Errorf("pod %d: %w", k, err)
		}
		out[k] = p
	}
	return out, nil
}

func (u *usage) addPod(p *Pod, who string) (topology.Pod, error) {
	t := u.t
	h, ok := t.HostByName(p.Host)
	if !ok {
		if p.Host == "" {
			return topology.Pod{}, fmt.Errorf("no host")
		}
		return topology.Pod{}, fmt.Errorf("unknown host %q", p.Host)
	}
	n := t.HostGPUCount(h)
	var mask uint64
	for _, i := range p.GPUs {
		switch {
		case i < 0 || i >= n:
			return topology.Pod{}, fmt.Errorf("GPU index %d out of range: host %q has %d GPUs (0…%d)", i, p.Host, n, n-1)
		case mask&(1<<uint(i)) != 0:
			return topology.Pod{}, fmt.Errorf("GPU %d listed twice", i)
		}
		mask |= 1 << uint(i)
	}
	switch {
	case p.Milli < 0 || p.Milli >= topology.FullGPU:
		return topology.Pod{}, fmt.Errorf("milli %d, want 0 (whole GPUs) or 1…999 (a fraction of one GPU)", p.Milli)
	case p.Milli > 0 && len(p.GPUs) != 1:
		return topology.Pod{}, fmt.Errorf("a fractional pod (milli %d) lists one GPU, not %d", p.Milli, len(p.GPUs))
	case p.CPUMilli < 0 || p.MemoryMiB < 0:
		return topology.Pod{}, fmt.Errorf("negative cpuMilli or memoryMiB")
	}
	lo, _ := t.HostGPUs(h)
	for _, i := range p.GPUs {
		g := lo + topology.GPUID(i)
		if other, used := u.whole[g]; used {
			return topology.Pod{}, fmt.Errorf("GPU %d of host %q is already used whole by %s", i, p.Host, other)
		}
		if p.Milli == 0 {
			if other, shared := u.share[g]; shared {
				return topology.Pod{}, fmt.Errorf("GPU %d of host %q is used whole and shared (by %s)", i, p.Host, other)
			}
			u.whole[g] = who
			continue
		}
		if u.milli[g]+p.Milli > topology.FullGPU {
			return topology.Pod{}, fmt.Errorf("GPU %d of host %q is shared past %d milli (%d + %d)",
				i, p.Host, topology.FullGPU, u.milli[g], p.Milli)
		}
		u.milli[g] += p.Milli
		if _, ok := u.share[g]; !ok {
			u.share[g] = who
		}
	}
	u.cpu[h] += int64(p.CPUMilli)
	u.mem[h] += int64(p.MemoryMiB)
	switch {
	case u.cpu[h] > int64(t.HostCPU(h)):
		return topology.Pod{}, fmt.Errorf("host %q has cpuMilli %d, its pods use %d", p.Host, t.HostCPU(h), u.cpu[h])
	case u.mem[h] > int64(t.HostMemory(h)):
		return topology.Pod{}, fmt.Errorf("host %q has memoryMiB %d, its pods use %d", p.Host, t.HostMemory(h), u.mem[h])
	}
	return topology.Pod{Host: h, GPUs: mask, Milli: p.Milli, CPUMilli: p.CPUMilli, MemoryMiB: p.MemoryMiB}, nil
}
