package bench

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"

	"github.com/blinksched/blink/topology"
)

var fragmented struct {
	sync.Mutex
	states map[stateKey]*topology.State
}

// Fragmented returns a State of the grid cluster filled by Fill(load, seed)
// (see Loaded), then fragmented by Fragment(seed): no last-level domain
// (rack or SU) is left entirely free, so a job asking for a whole domain
// fits only after moves. Built on first use and shared for the rest of the
// process: treat it as read-only, and Clone it before applying anything.
func Fragmented(shape, gpus string, load float64, seed uint64) (*topology.State, error) {
	fragmented.Lock()
	defer fragmented.Unlock()
	k := stateKey{clusterKey{shape, gpus}, load, seed}
	if s, ok := fragmented.states[k]; ok {
		return s, nil
	}
	base, _, err := Loaded(shape, gpus, load, seed)
	if err != nil {
		return nil, err
	}
	s := base.Clone()
	if _, err := Fragment(s, seed); err != nil {
		return nil, fmt.Errorf("bench: fragmented %s/%s: %w", shape, gpus, err)
	}
	if fragmented.states == nil {
		fragmented.states = map[stateKey]*topology.State{}
	}
	fragmented.states[k] = s
	return s, nil
}

// Fragment gives one single-GPU job to every entirely free last-level
// domain of s (rack or SU), on a random host drawn from seed, so that none
// is left entirely free, and returns how many it added. The jobs are movable
// and preemptible, priority 1, with the next job ids (from JobIDBound).
func Fragment(s *topology.State, seed uint64) (int, error) {
	t := s.Tree()
	rng := rand.New(rand.NewPCG(seed, 0x66726167))
	last := t.HostLevel() - 1
	lo, _ := t.LevelDomains(last)
	idle := s.IdleDomains(last).Clone()
	id := s.JobIDBound()
	info := topology.Job{Priority: 1, Preemptible: true, Movable: true, Required: topology.NoLevel, Preferred: topology.NoLevel}
	delta := topology.Delta{Ops: make([]topology.Op, 1)}
	n := 0
	for i, ok := idle.NextSet(0); ok; i, ok = idle.NextSet(i + 1) {
		hlo, hhi := t.Hosts(lo + topology.DomainID(i))
		h := hlo + topology.HostID(rng.IntN(int(hhi-hlo)))
		free := s.HostFreeMask(h)
		if free == 0 {
			continue
		}
		pod := topology.Pod{Host: h, GPUs: uint64(1) << uint(bits.TrailingZeros64(free))}
		delta.Ops[0] = topology.AddJob(id, info, pod)
		if err := s.Apply(delta); err != nil {
			return n, err
		}
		id++
		n++
	}
	return n, nil
}
