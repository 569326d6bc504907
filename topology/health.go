package topology

import "fmt"

func (s *State) setGPUHealth(g GPUID, h Health) error {
	t := s.t
	if g < 0 || int(g) >= t.NumGPUs() {
		return fmt.Errorf("%w: GPU %d out of range", ErrInvalid, g)
	}
	if h != Healthy && h != Failed {
		return fmt.Errorf("%w: a GPU is healthy or failed, not %s", ErrInvalid, h)
	}
	host := t.GPUHost(g)
	lo, n := int(t.hostGPU[host]), t.HostGPUCount(host)
	bit := uint64(1) << uint(int(g)-lo)
	old := getBits(s.failed, lo, n)
	cur := old &^ bit
	if h == Failed {
		cur |= bit
	}
	if cur == old {
		return nil // no change: the host's generation stays, as for host health
	}
	s.setBits(s.failed, lo, n, cur)
	s.commit(host)
	return nil
}

func validHealth(h Health) error {
	if h > Failed {
		return fmt.Errorf("%w: health %d", ErrInvalid, h)
	}
	return nil
}

func (s *State) setHostHealthChecked(h HostID, health Health) error {
	if h < 0 || int(h) >= s.t.NumHosts() {
		return fmt.Errorf("%w: host %d out of range", ErrInvalid, h)
	}
	if err := validHealth(health); err != nil {
		return err
	}
	s.setHostHealth(h, health)
	return nil
}

func (s *State) setHostHealth(h HostID, health Health) {
	f := s.hostFlags[h]
	if Health(f&flagHealthMask) == health {
		return
	}
	s.w8(&s.hostFlags[h], f&^flagHealthMask|uint8(health))
	s.commit(h)
}

func (s *State) setDomainHealth(d DomainID, health Health) error {
	if d < 0 || int(d) >= s.t.NumDomains() {
		return fmt.Errorf("%w: domain %d out of range", ErrInvalid, d)
	}
	if err := validHealth(health); err != nil {
		return err
	}
	lo, hi := s.t.Hosts(d)
	for h := lo; h < hi; h++ {
		s.setHostHealth(h, health)
	}
	return nil
}
