package preempt

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Fallbacks counts the searches that had to be repeated because the model
// and placement disagreed (a bug: tests check it stays 0).
func Fallbacks(p *Planner) int { return p.fallbacks }

// SetFolding turns on or off (on by default) the folding of dead hosts into
// a model's rest and, with it, the skipping of quiet racks and job-first
// builds: with it off every host is modelled, the simple form tests compare
// against.
func SetFolding(p *Planner, on bool) { p.unfolded = !on }

// SetTopDown turns on or off (on by default) the top-down answer for gangs
// that may go anywhere (topdown.go).
func SetTopDown(p *Planner, on bool) { p.noTopDown = !on }

// SetSolo turns on or off (on by default) the single-victim bound
// (solo.go).
func SetSolo(p *Planner, on bool) { p.noSolo = !on }

// SetLone turns on or off (on by default) the lone-victim answer for gangs
// that may go anywhere (lone.go).
func SetLone(p *Planner, on bool) { p.noLone = !on }

// SetLoneNow makes the lone-victim answer for gangs required in a domain be
// tried at the first leaf (on) or once the leaves have read hosts enough
// (off, the default).
func SetLoneNow(p *Planner, on bool) { p.loneNow = on }

// SetRuns turns on or off (on by default) the greedy's drops in runs
// (dropRuns); off, it drops candidates one at a time.
func SetRuns(p *Planner, on bool) { p.noRuns = !on }

// Lones counts the answers the lone-victim answer gave since the Planner
// was made.
func Lones(p *Planner) int { return p.lones }

// TopDowns counts the answers the top-down construction proved optimal
// since the Planner was made.
func TopDowns(p *Planner) int { return p.topDowns }

// TopDownsPruned counts those of them that evicted more candidates than
// the bound and pruned them.
func TopDownsPruned(p *Planner) int { return p.topDownsPruned }

// JobFirstDiff compares the job-first build of the whole cluster
// (modeljobs.go), by both ways of fetching the candidates' pods, with the
// host-by-host build it stands for (addHost over every host, dead hosts
// folded), for request r and the candidates of r (and those below below):
// the same hosts (but for hostRec.others, which the job-first build
// approximates) with the same candidate pods, the same candidates, the same
// rest. It returns false, nil when r does not take the job-first path.
func JobFirstDiff(p *Planner, s *topology.State, r *placement.Request, below int32) (bool, error) {
	p.begin(s, r)
	hosts := topology.HostID(s.Tree().NumHosts())
	if !p.jobFirst(0, hosts, p.modelExact && p.wholeSets()) {
		return false, nil
	}
	p.below = below
	for _, mode := range []int{modeCands, modeBelow} {
		m := &p.m
		m.start(p, 0, hosts)
		for h := range hosts {
			m.addHost(h, mode, true)
		}
		want := snapshot(m)
		for fetch := 1; fetch <= 2; fetch++ {
			p.fetch = fetch
			m.start(p, 0, hosts)
			m.addByJobs(mode)
			p.fetch = 0
			if got := snapshot(m); !reflect.DeepEqual(got, want) {
				return true, fmt.Errorf("mode %d, fetch %d: job first\n%+v\nhost by host\n%+v", mode, fetch, got, want)
			}
		}
	}
	return true, nil
}

type modelSnap struct {
	Hosts          []hostRec
	Pods           []podEnt
	Cands          []cand
	Rest           []int64
	RestGPUs, GPUs int64
}

func snapshot(m *model) modelSnap {
	hs := cloneNil(m.hosts)
	for i := range hs {
		hs[i].others = false
	}
	return modelSnap{hs, cloneNil(m.pods), cloneNil(m.cands), cloneNil(m.rest), m.restGPUs, m.gpus0}
}

// cloneNil is slices.Clone, but nil for an empty slice: builds that made room
// for entries they did not add (addByJobs) compare equal to builds that did
// not.
func cloneNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// SetSlotBound forces the slot bound's summary (slots.go): on > 0 made at
// the first leaf, < 0 never, 0 as the Planner decides.
func SetSlotBound(p *Planner, on int) { p.slotForce = on }

// SetCreditBound sets when the credit bound applies: < 0 never, otherwise
// (the default) on every leaf.
func SetCreditBound(p *Planner, on int) { p.creditForce = on }

// SetCreditPrios caps the priorities the credit bound tries one by one (0:
// the default), so that small instances take its path past the cap.
func SetCreditPrios(p *Planner, n int) { p.cred.prios = n }

// Singles is how many leaves the last Plan answered from the credit
// bound's one victim, without a model.
func Singles(p *Planner) int { return p.singles }

// CreditKeys is SlotKeys for the credit bound: each leaf's aggregate bound
// raised by it (nil if r does not take it).
func CreditKeys(p *Planner, s *topology.State, r *placement.Request) (leaves []topology.DomainID, keys []Cost, ok []bool) {
	p.begin(s, r)
	if !p.creditOK {
		return nil, nil, nil
	}
	return leafKeys(p, s, p.creditKey)
}

// SetSlotTop sets how many candidates the slot bound's summary keeps (0:
// the default), so that small instances exercise the candidates beyond it.
func SetSlotTop(p *Planner, n int) { p.slots.keep = n }

// SlotKeys returns, for request r on s, the leaf domains of the search and
// each one's bound with the slot bound (ok false: no victim set fits there
// by the bound), or nil if r does not take the slot bound.
func SlotKeys(p *Planner, s *topology.State, r *placement.Request) (leaves []topology.DomainID, keys []Cost, ok []bool) {
	p.begin(s, r)
	if !p.slotOK {
		return nil, nil, nil
	}
	p.makeSlots()
	return leafKeys(p, s, p.slotKey)
}

// leafKeys is every leaf domain's aggregate bound raised by key.
func leafKeys(p *Planner, s *topology.State, key func(topology.DomainID, Cost) (Cost, bool)) (leaves []topology.DomainID, keys []Cost, ok []bool) {
	lo, hi := s.Tree().LevelDomains(p.leafLevel)
	for d := lo; d < hi; d++ {
		k, fine := p.lb(d)
		if fine {
			k, fine = key(d, k)
		}
		leaves, keys, ok = append(leaves, d), append(keys, k), append(ok, fine)
	}
	return leaves, keys, ok
}

// SoloKey is the single-victim bound (soloKey) of lb over live preemptible
// jobs of the given milli, all of priority 0, for a request of priority 1.
func SoloKey(millis []uint64, lb Cost) Cost {
	p := &Planner{r: &placement.Request{Priority: 1}, prios: make([]int32, len(millis)), millis: millis,
		preW: make([]uint64, (len(millis)+63)/64)}
	for j := range millis {
		p.preW[j/64] |= 1 << (j % 64)
	}
	p.makeSolo()
	return p.soloKey(lb)
}

// SoloBucket is the single-victim summary's bucket of a job of milli
// milli-GPUs.
func SoloBucket(milli int64) int { return soloBucket(milli) }

// SetSoleRuns turns on or off (on by default) the credit bound's reading of
// runs of sole-pod hosts at once (credit_whole.go); off, it reads every
// host's pods.
func SetSoleRuns(p *Planner, on bool) { p.noSoleRuns = !on }

// CreditScans returns, for request r on s, what the credit bound reads in
// every leaf domain, one line each: the pods the domain takes with no
// victim (Σ⌊f/g⌋) and the candidates credited, in the order met (id,
// credit, solo pods); nil if r does not take the credit bound.
func CreditScans(p *Planner, s *topology.State, r *placement.Request) []string {
	p.begin(s, r)
	if !p.creditOK {
		return nil
	}
	var out []string
	lo, hi := s.Tree().LevelDomains(p.leafLevel)
	for d := lo; d < hi; d++ {
		x := &p.cred
		x.jobs = x.jobs[:0]
		p.nextCandEpoch()
		g := p.sets[p.primary].gpus
		for n := range x.pods {
			x.pods[n] = int64(n) / g
		}
		plain := p.eligible == nil && p.anyModel
		noms := p.s.NumNominations() != 0 && p.s.NominatedIn(d)
		line := fmt.Sprintf("domain %d: base %d:", d, p.creditHosts(d, g, plain, noms))
		for _, c := range x.jobs {
			line += fmt.Sprintf(" (%d %d %d)", c.id, c.w, c.solo)
		}
		out = append(out, line)
	}
	return out
}

// SoleRuns counts the runs of sole-pod hosts the credit bound read at once
// since the Planner was made.
func SoleRuns(p *Planner) int { return p.soleRuns }
