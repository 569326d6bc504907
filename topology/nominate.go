package topology

import (
	"fmt"
	"slices"
)

func (s *State) nominate(n *Nomination) error {
	t := s.t
	id := n.Job
	if s.jobs[id].nom >= 0 {
		return fmt.Errorf("%w: job %d already holds a nomination", ErrStale, id)
	}
	if len(n.GPUs) == 0 {
		return fmt.Errorf("%w: nomination of job %d names no GPUs", ErrInvalid, id)
	}
	end := GPUID(0) // the end of the last GPU's host: ascending GPUs of one host share its lookup
	for i, g := range n.GPUs {
		switch {
		case g < 0 || int(g) >= t.NumGPUs():
			return fmt.Errorf("%w: GPU %d out of range", ErrInvalid, g)
		case i > 0 && g <= n.GPUs[i-1]:
			return fmt.Errorf("%w: nominated GPUs must be strictly ascending (%d after %d)", ErrInvalid, g, n.GPUs[i-1])
		case testBit(s.nominated, int(g)):
			return fmt.Errorf("%w: GPU %d is already nominated for job %d", ErrStale, g, s.noms[s.nominationOf(g)].Job)
		case testBit(s.failed, int(g)):
			return fmt.Errorf("%w: GPU %d failed", ErrStale, g)
		}
		if g < end {
			continue
		}
		h := t.GPUHost(g)
		if end = GPUID(t.hostGPU[h+1]); Health(s.hostFlags[h]&flagHealthMask) != Healthy {
			return fmt.Errorf("%w: GPU %d is on %s host %s", ErrStale, g, Health(s.hostFlags[h]&flagHealthMask), t.HostName(h))
		}
	}
	slot := int32(0)
	for s.noms[slot].live {
		slot++
	}
	rec := nomRec{Nomination: *n, live: true}
	if old := s.noms[slot].GPUs; !s.jr.on && cap(old) >= len(n.GPUs) {
		rec.GPUs = append(old[:0], n.GPUs...)
	} else {
		rec.GPUs = slices.Clone(n.GPUs)
	}
	s.wNom(slot, rec)
	s.nomB = s.boundsOfNoms()
	s.jobW(id).nom = slot
	s.markNominated(rec.GPUs, true)
	return nil
}

// markNominated sets or clears the nominated bit of sorted GPUs, host by host.
func (s *State) markNominated(gpus []GPUID, on bool) {
	t := s.t
	for i := 0; i < len(gpus); {
		h := t.GPUHost(gpus[i])
		lo, n := int(t.hostGPU[h]), t.HostGPUCount(h)
		var m uint64
		for ; i < len(gpus) && int(gpus[i]) < lo+n; i++ {
			m |= 1 << uint(int(gpus[i])-lo)
		}
		cur := getBits(s.nominated, lo, n)
		if on {
			cur |= m
		} else {
			cur &^= m
		}
		s.setBits(s.nominated, lo, n, cur)
		if s.plainHost(h) && getBits(s.partial, lo, n)&m == 0 {
			s.commitNominated(h, lo, n, m, on)
		} else {
			s.commit(h)
		}
	}
}

// releaseNomination drops the nomination in slot.
func (s *State) releaseNomination(slot int32) {
	s.dropNomination(slot)
	s.nomB = s.boundsOfNoms()
}

// dropNomination is releaseNomination without the bounds' recount, which
// its caller owes.
func (s *State) dropNomination(slot int32) {
	rec := s.noms[slot]
	s.markNominated(rec.GPUs, false)
	s.jobW(rec.Job).nom = -1
	s.wNom(slot, nomRec{Nomination: Nomination{GPUs: rec.GPUs[:0]}})
}

func (s *State) cancelNomination(id JobID) error {
	if int(id) >= len(s.jobs) || s.jobs[id].nom < 0 {
		return fmt.Errorf("%w: job %d holds no nomination", ErrStale, id)
	}
	n := s.jobs[id].nom
	if n < 0 {
		return fmt.Errorf("%w: job %d holds no nomination", ErrStale, id)
	}
	s.releaseNomination(n)
	return nil
}

func (s *State) expireNominations(now int64) {
	for i := range s.noms {
		if s.noms[i].live && s.noms[i].Expiry <= now {
			s.dropNomination(int32(i))
		}
	}
	s.nomB = s.boundsOfNoms() // once, however many expired
}

// nominationOf returns the slot of the nomination holding GPU g, or -1.
// O(nominations · log GPUs per nomination).
func (s *State) nominationOf(g GPUID) int32 {
	for i := range s.noms {
		if n := &s.noms[i]; n.live {
			if _, ok := slices.BinarySearch(n.GPUs, g); ok {
				return int32(i)
			}
		}
	}
	return -1
}

func testBit(w []uint64, i int) bool { return w[i>>6]&(1<<(uint(i)&63)) != 0 }
