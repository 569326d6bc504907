package preempt_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/scenarios/*.txt from the current output")

// A scenario is a cluster and a sequence of requests; each step's answer is
// applied as far as the step says, and the cluster is drawn before and
// after (see render; the request of step k is drawn as the digit k). The text is compared with testdata/scenarios/NAME.txt;
// run with -update to rewrite it.
type scenario struct {
	name    string
	levels  []string
	hosts   []topology.HostSpec
	jobs    []scJob
	steps   []scStep
	letters map[topology.JobID]byte
}

type scJob struct {
	prio int32
	pre  bool
	pods []topology.Pod // by host index
}

type scStep struct {
	what string
	req  placement.Request
	// apply: "all" nominates, evicts the victims and places the request;
	// "wait" nominates and evicts (the request waits for its victims).
	apply string
}

func hostsOf(prefix string, n, gpus int, path ...string) []topology.HostSpec {
	out := make([]topology.HostSpec, n)
	for i := range out {
		out[i] = topology.HostSpec{Name: fmt.Sprintf("%s%d", prefix, i), Path: path, GPUs: gpus}
	}
	return out
}

// gpus returns a mask of GPUs lo…hi-1.
func gpus(lo, hi int) uint64 { return (uint64(1)<<uint(hi) - 1) &^ (uint64(1)<<uint(lo) - 1) }

func (sc *scenario) run(t *testing.T) string {
	tree, err := topology.BuildHosts(sc.levels, sc.hosts)
	require.NoError(t, err)
	s := topology.NewState(tree)
	sc.letters = map[topology.JobID]byte{}
	for i, j := range sc.jobs {
		id := topology.JobID(i)
		sc.letters[id] = byte('A' + i%26)
		if i >= 26 {
			sc.letters[id] = byte('a' + i%26) // only whole-GPU pods in scenarios: no clash with fractions
		}
		info := topology.Job{Priority: j.prio, Preemptible: j.pre, Required: topology.NoLevel, Preferred: topology.NoLevel}
		require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(id, info, j.pods...)}}))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nbefore:\n%s\njobs:\n%s", sc.name, render(s, sc.letters), legend(s, sc.letters))
	var p preempt.Planner
	var res preempt.Result
	for k, st := range sc.steps {
		r := st.req
		r.Job = topology.JobID(len(sc.jobs) + k)
		sc.letters[r.Job] = byte('1' + k)
		fmt.Fprintf(&b, "\nstep %d: %s — job %d (%c), priority %d\n", k+1, st.what, r.Job, sc.letters[r.Job], r.Priority)
		ok, why, err := p.Plan(s, &r, int64(10*k), 1000, &res)
		require.NoError(t, err)
		require.Zero(t, preempt.Fallbacks(&p))
		if !ok {
			fmt.Fprintf(&b, "  no fit: %s\n", why.Format(tree))
			continue
		}
		var v []string
		for _, j := range res.Victims {
			v = append(v, fmt.Sprintf("%c", sc.letters[j]))
		}
		fmt.Fprintf(&b, "  victims [%s]: %s; exact %v\n", strings.Join(v, " "), res.Cost, res.Exact)
		if len(res.Nomination.GPUs) > 0 {
			fmt.Fprintf(&b, "  nominated: %s\n", gpuList(tree, res.Nomination.GPUs))
		}
		require.NoError(t, s.Apply(res.Delta()))
		for _, j := range res.Victims {
			require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(j)}}))
		}
		if st.apply == "all" {
			require.NoError(t, s.Apply(res.Plan.Delta()))
		}
		require.NoError(t, s.Check())
		fmt.Fprintf(&b, "after:\n%s", render(s, sc.letters))
	}
	return b.String()
}

// gpuList names GPUs as host:index, index….
func gpuList(t *topology.Tree, gs []topology.GPUID) string {
	var parts []string
	last := topology.HostID(-1)
	for _, g := range gs {
		h := t.GPUHost(g)
		lo, _ := t.HostGPUs(h)
		name := t.HostName(h)
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		if h != last {
			parts = append(parts, fmt.Sprintf("%s:%d", name, g-lo))
			last = h
		} else {
			parts[len(parts)-1] += fmt.Sprintf(",%d", g-lo)
		}
	}
	return strings.Join(parts, " ")
}

func TestScenarios(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			got := sc.run(t)
			file := filepath.Join("testdata", "scenarios", sc.name+".txt")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
				require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "run go test -run TestScenarios -update to create it")
			require.Equal(t, string(want), got)
		})
	}
}

func one(h topology.HostID, m uint64) []topology.Pod { return []topology.Pod{{Host: h, GPUs: m}} }

func scenarios() []*scenario {
	var out []*scenario

	// One 8-GPU job arrives on 8-GPU hosts fully packed with 1-GPU jobs of
	// mixed priority: the host whose jobs are all of the lowest priority
	// goes, all of it and nothing else.
	{
		sc := &scenario{name: "small_jobs", levels: []string{"rack"}, hosts: hostsOf("h", 4, 8, "r0")}
		prios := [4][8]int32{{1, 1, 10, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1000}, {3, 3, 3, 3, 3, 3, 3, 3}, {1, 1, 1, 2, 1, 1, 1, 1}}
		for h := range 4 {
			for g := range 8 {
				sc.jobs = append(sc.jobs, scJob{prios[h][g], prios[h][g] < 1000, one(topology.HostID(h), 1<<uint(g))})
			}
		}
		sc.steps = []scStep{{"one pod of 8 GPUs", placement.Request{Priority: 50, Sets: []placement.PodSet{{Pods: 1, GPUs: 8}}}, "all"}}
		out = append(out, sc)
	}

	// A rack-required gang (18 pods of 4 GPUs: a whole NVL72 domain) on a
	// fully packed block of two NVL72 racks: rack0 holds small jobs, one of
	// them not preemptible; rack1 a 16-host gang of priority 10 and two
	// hosts of priority-1 jobs.
	{
		var hosts []topology.HostSpec
		for r := range 2 {
			for i := range 18 {
				hosts = append(hosts, topology.HostSpec{Name: fmt.Sprintf("r%dh%02d", r, i), Path: []string{fmt.Sprintf("rack%d", r)}, GPUs: 4})
			}
		}
		sc := &scenario{name: "nvl72_rack", levels: []string{"rack"}, hosts: hosts}
		for h := range 18 {
			prio, pre := int32(1+9*(h%2)), true
			if h == 7 {
				prio, pre = 100, false
			}
			sc.jobs = append(sc.jobs, scJob{prio, pre, one(topology.HostID(h), 0xF)})
		}
		var gang []topology.Pod
		for h := 18; h < 34; h++ {
			gang = append(gang, topology.Pod{Host: topology.HostID(h), GPUs: 0xF})
		}
		sc.jobs = append(sc.jobs, scJob{10, true, gang})
		sc.jobs = append(sc.jobs, scJob{1, true, one(34, 0x3)}, scJob{1, true, one(34, 0xC)}, scJob{1, true, one(35, 0xF)})
		sc.steps = []scStep{{"18 pods of 4 GPUs, required rack", placement.Request{Priority: 500, Required: 1,
			Sets: []placement.PodSet{{Pods: 18, GPUs: 4}}}, "all"}}
		out = append(out, sc)
	}

	// The cheapest victims: one big low-priority job rather than many small
	// ones of the same priority (fewer victims), though they hold fewer GPUs.
	{
		sc := &scenario{name: "big_vs_small", levels: []string{"rack"}, hosts: hostsOf("h", 3, 8, "r0")}
		sc.jobs = append(sc.jobs, scJob{3, true, one(0, gpus(0, 8))})
		for g := range 8 {
			sc.jobs = append(sc.jobs, scJob{3, true, one(1, 1<<uint(g))})
		}
		sc.jobs = append(sc.jobs, scJob{3, true, one(2, gpus(0, 2))}, scJob{3, true, one(2, gpus(2, 4))})
		sc.steps = []scStep{{"one pod of 8 GPUs", placement.Request{Priority: 10, Sets: []placement.PodSet{{Pods: 1, GPUs: 8}}}, "all"}}
		out = append(out, sc)
	}

	// A victim spanning two racks frees GPUs in both, but a rack-required
	// gang needs them in one: it is evicted with the job beside it.
	{
		hosts := append(hostsOf("a", 2, 8, "r0"), hostsOf("b", 2, 8, "r1")...)
		sc := &scenario{name: "multi_domain", levels: []string{"rack"}, hosts: hosts}
		sc.jobs = append(sc.jobs,
			scJob{1, true, one(0, gpus(0, 8))},
			scJob{2, true, []topology.Pod{{Host: 1, GPUs: gpus(0, 8)}, {Host: 2, GPUs: gpus(0, 8)}}},
			scJob{1, true, one(3, gpus(0, 4))}, scJob{1, true, one(3, gpus(4, 8))})
		sc.steps = []scStep{{"2 pods of 8 GPUs, required rack", placement.Request{Priority: 5, Required: 1,
			Sets: []placement.PodSet{{Pods: 2, GPUs: 8}}}, "all"}}
		out = append(out, sc)
	}

	// Nominated GPUs are defended: a priority-50 job evicts eight small jobs
	// and waits for them; a priority-20 job that arrives meanwhile cannot
	// take the nominated GPUs and evicts elsewhere; a priority-90 job may
	// take them (it outranks the nominee).
	{
		sc := &scenario{name: "nominated", levels: []string{"rack"}, hosts: hostsOf("h", 3, 8, "r0")}
		for g := range 8 {
			sc.jobs = append(sc.jobs, scJob{1, true, one(0, 1<<uint(g))})
		}
		sc.jobs = append(sc.jobs, scJob{5, true, one(1, gpus(0, 8))}, scJob{1000, false, one(2, gpus(0, 8))})
		eight := []placement.PodSet{{Pods: 1, GPUs: 8}}
		sc.steps = []scStep{
			{"8 GPUs, waits for its victims", placement.Request{Priority: 50, Sets: eight}, "wait"},
			{"8 GPUs, lower priority than the nominee", placement.Request{Priority: 20, Sets: eight}, "all"},
			{"8 GPUs, higher priority than the nominee", placement.Request{Priority: 90, Sets: eight}, "all"},
		}
		out = append(out, sc)
	}
	return out
}

// TestUnplaceable: a request no host could hold however free — more GPUs,
// CPU or memory per pod than any host has — is answered Unplaceable with
// placement's reason, before any eviction is considered, on a full cluster
// of preemptible jobs.
func TestUnplaceable(t *testing.T) {
	hosts := hostsOf("h", 4, 8, "r0")
	for i := range hosts {
		hosts[i].CPUMilli, hosts[i].MemoryMiB = 64000, 262144
	}
	tree, err := topology.BuildHosts([]string{"rack"}, hosts)
	require.NoError(t, err)
	s := topology.NewState(tree)
	for h := range topology.HostID(4) {
		require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(topology.JobID(h),
			topology.Job{Priority: 1, Preemptible: true, Required: topology.NoLevel, Preferred: topology.NoLevel},
			topology.Pod{Host: h, GPUs: gpus(0, 8), CPUMilli: 1000})}}))
	}
	var p preempt.Planner
	var res preempt.Result
	for _, c := range []struct {
		set  placement.PodSet
		code placement.ReasonCode
		text string
	}{
		{placement.PodSet{Pods: 1, GPUs: 9}, placement.HostTooSmall, "pod set 0: a pod needs 9 GPUs, the largest acceptable host has 8"},
		{placement.PodSet{Pods: 1, GPUs: 1, CPUMilli: 100000}, placement.HostCPUTooSmall,
			"pod set 0: a pod needs 100000 milli-cores of CPU, the most an acceptable host with GPUs enough has is 64000"},
		{placement.PodSet{Pods: 2, GPUs: 4, MemoryMiB: 300000}, placement.HostMemoryTooSmall,
			"pod set 0: a pod needs 300000 MiB of memory, the most an acceptable host with GPUs and CPU enough has is 262144"},
	} {
		r := placement.Request{Job: 10, Priority: 5, Required: topology.NoLevel, Preferred: topology.NoLevel,
			Sets: []placement.PodSet{c.set}}
		ok, why, err := p.Plan(s, &r, 0, 1000, &res)
		require.NoError(t, err)
		require.False(t, ok)
		require.Equal(t, preempt.Unplaceable, why.Code, "%+v", c.set)
		require.Equal(t, c.code, why.Place.Code)
		require.Equal(t, c.text, why.Format(tree))
		require.NoError(t, s.Check())
	}
}
