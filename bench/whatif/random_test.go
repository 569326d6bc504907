package whatif

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/topology"
)

var (
	seed   = flag.Uint64("seed", 0, "seed of TestRandomScenarios (0: a fixed default)")
	rounds = flag.Int("rounds", 2000, "scenarios TestRandomScenarios tries")
)

// TestRandomScenarios answers random small scenarios through Command and
// checks every answer: a fitting one with verifyPlace, and whether it fits at
// all against an oracle that decides feasibility exactly from per-host
// capacities computed from the scenario file alone. A failing scenario is
// shrunk (jobs, pods, hosts, limits and request options dropped while it
// still fails) and printed as a scenario file.
func TestRandomScenarios(t *testing.T) {
	s := *seed
	if s == 0 {
		s = 20261130
	}
	t.Logf("seed %d (override with -seed)", s)
	rng := rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
	n := *rounds
	if testing.Short() {
		n /= 10
	}
	failures := 0
	for i := 0; i < n && failures < 3; i++ {
		sc := randomScenario(rng)
		err := checkRandom(t, sc)
		if err == nil {
			continue
		}
		failures++
		small := shrink(sc, func(c *Scenario) bool { return checkRandom(t, c) != nil })
		t.Errorf("round %d: %v\nshrunk to: %v\n%s", i, err, checkRandom(t, small), compactJSON(small))
	}
}

// checkRandom answers sc and returns what is wrong with the answer, if
// anything.
func checkRandom(t *testing.T, sc *Scenario) error {
	in, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := command(t, nil, in)
	if code != ExitOK {
		return fmt.Errorf("exit %d: %s", code, stderr)
	}
	var a Answer
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		return err
	}
	dec, err := Decode(bytes.NewReader(in))
	if err != nil {
		return err
	}
	want, why, err := oracleFits(dec)
	switch {
	case err != nil:
		return err
	case a.Fits && !want:
		return fmt.Errorf("fits, but the oracle says %s; answer %s", why, compactJSON(a.Pods))
	case !a.Fits && want:
		return fmt.Errorf("no fit (%s), but the oracle says %s", a.Reason, why)
	case a.Fits:
		return verifyPlace(dec, &a)
	}
	return nil
}

// shrink drops parts of sc while bad(sc) stays true, and returns the
// smallest scenario found.
func shrink(sc *Scenario, bad func(*Scenario) bool) *Scenario {
	clone := func(s *Scenario) *Scenario {
		data, _ := json.Marshal(s)
		var c Scenario
		_ = json.Unmarshal(data, &c)
		return &c
	}
	for changed := true; changed; {
		changed = false
		for _, edit := range shrinkEdits(sc) {
			c := clone(sc)
			if edit(c) && bad(c) {
				sc, changed = c, true
				break
			}
		}
	}
	return sc
}

// shrinkEdits lists the one-step simplifications of sc; each applies to a
// clone and reports whether it changed anything.
func shrinkEdits(sc *Scenario) []func(*Scenario) bool {
	var edits []func(*Scenario) bool
	for i := range sc.Jobs {
		edits = append(edits, func(c *Scenario) bool { c.Jobs = slices.Delete(c.Jobs, i, i+1); return true })
		for k := range sc.Jobs[i].Pods {
			edits = append(edits, func(c *Scenario) bool {
				if len(c.Jobs[i].Pods) == 1 {
					return false
				}
				c.Jobs[i].Pods = slices.Delete(c.Jobs[i].Pods, k, k+1)
				return true
			})
		}
	}
	for i := range sc.Hosts {
		edits = append(edits, func(c *Scenario) bool { // the host, its jobs and health
			if len(c.Hosts) == 1 {
				return false
			}
			name := c.Hosts[i].Name
			c.Hosts = slices.Delete(c.Hosts, i, i+1)
			c.Jobs = slices.DeleteFunc(c.Jobs, func(j Job) bool {
				return slices.ContainsFunc(j.Pods, func(p Pod) bool { return p.Host == name })
			})
			c.Failed = slices.DeleteFunc(c.Failed, func(h string) bool { return h == name })
			c.Draining = slices.DeleteFunc(c.Draining, func(h string) bool { return h == name })
			return true
		}, func(c *Scenario) bool {
			h := &c.Hosts[i]
			if h.CPUMilli == nil && h.MemoryMiB == nil {
				return false
			}
			h.CPUMilli, h.MemoryMiB = nil, nil
			return true
		})
	}
	edits = append(edits,
		func(c *Scenario) bool { ok := len(c.Failed) > 0; c.Failed = nil; return ok },
		func(c *Scenario) bool { ok := len(c.Draining) > 0; c.Draining = nil; return ok },
		func(c *Scenario) bool { ok := len(c.Request.Models) > 0; c.Request.Models = nil; return ok },
		func(c *Scenario) bool { ok := c.Request.PreferredLevel != ""; c.Request.PreferredLevel = ""; return ok },
		func(c *Scenario) bool { ok := c.Request.RequiredLevel != ""; c.Request.RequiredLevel = ""; return ok },
		func(c *Scenario) bool { ok := c.Request.Exclusive; c.Request.Exclusive = false; return ok },
		func(c *Scenario) bool {
			ok := c.Request.CPUMilli+c.Request.MemoryMiB != 0
			c.Request.CPUMilli, c.Request.MemoryMiB = 0, 0
			return ok
		},
		func(c *Scenario) bool {
			ok := c.Request.SliceSize != 0
			c.Request.SliceSize, c.Request.SliceLevel = 0, ""
			return ok
		})
	return edits
}

// compactJSON renders v as JSON without null, false, 0, "" and [] members
// (but keeps gpus, where 0 and [] mean something).
func compactJSON(v any) string {
	data, _ := json.Marshal(v)
	var x any
	_ = json.Unmarshal(data, &x)
	var prune func(any) any
	prune = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for k, v := range x {
				empty := v == nil || v == false || v == 0.0 || v == ""
				if a, ok := v.([]any); ok && len(a) == 0 {
					empty = true
				}
				if empty && k != "gpus" {
					delete(x, k)
					continue
				}
				x[k] = prune(v)
			}
		case []any:
			for i := range x {
				x[i] = prune(x[i])
			}
		}
		return x
	}
	out, _ := json.Marshal(prune(x))
	return string(out)
}

// randomScenario builds a valid scenario of at most 8 hosts, 5 running jobs
// and one request, with random levels, models, CPU, memory, sharing, health,
// required and preferred levels, slices and exclusivity.
func randomScenario(rng *rand.Rand) *Scenario {
	sc := &Scenario{Mode: ModePlace}
	allLevels := []string{"block", "rack"}
	sc.Levels = allLevels[2-rng.IntN(3):]
	nh := 1 + rng.IntN(8)
	models := []string{"H100", "A100"}
	for i := range nh {
		path := make([]string, len(sc.Levels))
		for l := range path {
			path[l] = fmt.Sprintf("%s%d", sc.Levels[l][:1], rng.IntN(2))
		}
		gpus := []int{0, 1, 2, 4, 8, 8}[rng.IntN(6)]
		h := Host{Name: fmt.Sprintf("h%d", i), Path: path, GPUs: &gpus, Model: models[rng.IntN(2)]}
		if rng.IntN(3) == 0 {
			cpu := int64(1000 * (1 + rng.IntN(16)))
			h.CPUMilli = &cpu
		}
		if rng.IntN(4) == 0 {
			mem := int64(1024 * (1 + rng.IntN(8)))
			h.MemoryMiB = &mem
		}
		sc.Hosts = append(sc.Hosts, h)
	}
	// running jobs, kept valid by tracking what each host has left
	free := make([][]int32, nh) // free milli per GPU
	cpu := make([]int64, nh)
	mem := make([]int64, nh)
	for h := range sc.Hosts {
		free[h] = make([]int32, *sc.Hosts[h].GPUs)
		for g := range free[h] {
			free[h][g] = topology.FullGPU
		}
		cpu[h], mem[h] = topology.Unlimited, topology.Unlimited
		if c := sc.Hosts[h].CPUMilli; c != nil {
			cpu[h] = *c
		}
		if m := sc.Hosts[h].MemoryMiB; m != nil {
			mem[h] = *m
		}
	}
	for j := range rng.IntN(6) {
		job := Job{Name: fmt.Sprintf("j%d", j), Priority: int32(rng.IntN(100)), Preemptible: rng.IntN(2) == 0}
		for range 1 + rng.IntN(3) {
			h := rng.IntN(nh)
			p := Pod{Host: sc.Hosts[h].Name, GPUs: []int{}}
			switch n := len(free[h]); {
			case n > 0 && rng.IntN(3) == 0: // a fraction of a GPU with room
				g := rng.IntN(n)
				if free[h][g] > 0 {
					p.GPUs = []int{g}
					p.Milli = min(free[h][g], int32(1+rng.IntN(999)))
					if p.Milli == topology.FullGPU {
						p.Milli = 999
					}
					free[h][g] -= p.Milli
				}
			case n > 0: // some unused GPUs
				for g := range free[h] {
					if free[h][g] == topology.FullGPU && rng.IntN(2) == 0 {
						p.GPUs = append(p.GPUs, g)
						free[h][g] = 0
					}
				}
			}
			if c := int64(500 * rng.IntN(4)); c <= cpu[h] {
				p.CPUMilli, cpu[h] = int32(c), cpu[h]-c
			}
			if m := int64(512 * rng.IntN(3)); m <= mem[h] {
				p.MemoryMiB, mem[h] = int32(m), mem[h]-m
			}
			job.Pods = append(job.Pods, p)
		}
		sc.Jobs = append(sc.Jobs, job)
	}
	for h := range sc.Hosts {
		switch rng.IntN(10) {
		case 0:
			sc.Failed = append(sc.Failed, sc.Hosts[h].Name)
		case 1:
			sc.Draining = append(sc.Draining, sc.Hosts[h].Name)
		}
	}
	sc.Request = randomRequest(rng, sc.Levels)
	return sc
}

func randomRequest(rng *rand.Rand, levels []string) *Request {
	r := &Request{Name: "req", Pods: int32(1 + rng.IntN(6)), Priority: int32(rng.IntN(100)),
		Exclusive: rng.IntN(4) == 0}
	switch rng.IntN(5) {
	case 0: // CPU-only
		r.CPUMilli = int32(1000 * rng.IntN(3))
	case 1: // a fraction
		r.GPUs, r.Milli = 1, int32([]int{100, 250, 400, 500, 700, 999}[rng.IntN(6)])
	default:
		r.GPUs = int32([]int{1, 2, 3, 4, 8}[rng.IntN(5)])
	}
	if rng.IntN(3) == 0 {
		r.CPUMilli += int32(500 * rng.IntN(4))
		r.MemoryMiB = int32(512 * rng.IntN(3))
	}
	switch rng.IntN(4) {
	case 0:
		r.Models = []string{"A100"}
	case 1:
		r.Models = []string{"B200", "H100"}
	}
	all := append(slices.Clone(levels), "host") // root-first, below the root
	req := -1
	if rng.IntN(2) == 0 {
		req = rng.IntN(len(all))
		r.RequiredLevel = all[req]
	}
	if rng.IntN(3) == 0 && req+1 < len(all) {
		r.PreferredLevel = all[req+1+rng.IntN(len(all)-req-1)]
	}
	if rng.IntN(3) == 0 {
		var sizes []int32
		for s := int32(2); s <= r.Pods; s++ {
			if r.Pods%s == 0 {
				sizes = append(sizes, s)
			}
		}
		if len(sizes) > 0 {
			r.SliceSize = sizes[rng.IntN(len(sizes))]
			r.SliceLevel = all[max(req, 0)+rng.IntN(len(all)-max(req, 0))]
		}
	}
	return r
}

// oracleFits decides from the scenario alone whether the request fits: per
// host, how many pods it takes (health, model, exclusivity, free GPUs or
// milli, CPU, memory); per domain of the slice level, whole slices; fits when
// some domain of the required level (the root if none) holds them all.
func oracleFits(sc *Scenario) (fits bool, why string, err error) {
	c, err := sc.Build() // the Tree, for domain membership only
	if err != nil {
		return false, "", err
	}
	tr, r := c.Tree, sc.Request
	if len(r.Models) > 0 {
		known := false
		for _, m := range r.Models {
			_, ok := tr.ModelByName(m)
			known = known || ok
		}
		if !known {
			return false, "no model", nil
		}
	}
	caps := make([]int64, tr.NumHosts())
	for i := range sc.Hosts {
		h, _ := tr.HostByName(sc.Hosts[i].Name)
		caps[h] = hostCapacity(sc, i)
	}
	level := func(name string, def topology.Level) topology.Level {
		if name == "" {
			return def
		}
		l, _ := tr.LevelByName(name)
		return l
	}
	req := level(r.RequiredLevel, 0)
	sl, size := level(r.SliceLevel, tr.HostLevel()), int64(max(r.SliceSize, 1))
	key := func(h topology.HostID, l topology.Level) int {
		switch l {
		case 0:
			return 0
		case tr.HostLevel():
			return int(h)
		}
		return int(tr.HostDomain(h, l))
	}
	// pods in whole slices per slice-level domain, summed per required domain
	perSlice := map[int]int64{}
	for h := range tr.NumHosts() {
		perSlice[key(topology.HostID(h), sl)] += caps[h]
	}
	perReq := map[int]int64{}
	counted := map[int]bool{}
	for h := range tr.NumHosts() {
		s := key(topology.HostID(h), sl)
		if counted[s] {
			continue
		}
		counted[s] = true
		perReq[key(topology.HostID(h), req)] += perSlice[s] / size * size
	}
	best := int64(0)
	for _, n := range perReq {
		best = max(best, n)
	}
	name := "root"
	if req > 0 {
		name = tr.LevelName(req)
	}
	return best >= int64(r.Pods), fmt.Sprintf("the best %s domain holds %d of %d pods", name, best, r.Pods), nil
}

// hostCapacity is how many request pods host i of the scenario takes.
func hostCapacity(sc *Scenario, i int) int64 {
	h, r := &sc.Hosts[i], sc.Request
	if slices.Contains(sc.Failed, h.Name) || slices.Contains(sc.Draining, h.Name) {
		return 0
	}
	if len(r.Models) > 0 && !slices.Contains(r.Models, h.Model) {
		return 0
	}
	free := make([]int32, *h.GPUs)
	for g := range free {
		free[g] = topology.FullGPU
	}
	cpu, mem := int64(topology.Unlimited), int64(topology.Unlimited)
	if h.CPUMilli != nil {
		cpu = *h.CPUMilli
	}
	if h.MemoryMiB != nil {
		mem = *h.MemoryMiB
	}
	busy := false
	for _, j := range sc.Jobs {
		for _, p := range j.Pods {
			if p.Host != h.Name {
				continue
			}
			busy = true
			for _, g := range p.GPUs {
				if p.Milli == 0 {
					free[g] = 0
				} else {
					free[g] -= p.Milli
				}
			}
			cpu -= int64(p.CPUMilli)
			mem -= int64(p.MemoryMiB)
		}
	}
	if r.Exclusive && busy {
		return 0
	}
	c := int64(1 << 40)
	switch {
	case r.Milli > 0:
		c = 0
		for _, f := range free {
			c += int64(f / r.Milli)
		}
	case r.GPUs > 0:
		n := int64(0)
		for _, f := range free {
			if f == topology.FullGPU {
				n++
			}
		}
		c = n / int64(r.GPUs)
	}
	if r.CPUMilli > 0 {
		c = min(c, cpu/int64(r.CPUMilli))
	}
	if r.MemoryMiB > 0 {
		c = min(c, mem/int64(r.MemoryMiB))
	}
	return c
}
