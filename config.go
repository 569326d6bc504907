package blink

import (
	"fmt"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Config tunes an Engine. The zero value is valid: validate fills every zero
// field with its default. Times are in the caller's units (the now passed to
// Submit and Cycle); the defaults assume now counts seconds.
type Config struct {
	// BindTimeout: a bind (or repair) the embedder has not confirmed with
	// Bound this long after the cycle that decided it expires: the job leaves
	// the State and is pending again. Default 60.
	BindTimeout int64
	// EvictTimeout: an eviction not confirmed with Evicted this long after it
	// was decided is given up: the victim counts as running again (a victim
	// already released from the State, see Repair, counts as evicted and is
	// pending again). Default 120.
	EvictTimeout int64
	// MoveTimeout: a defragmentation move not confirmed with Moved this long
	// after it was decided is rolled back when the job's old GPUs are still
	// free (else the job is taken to be at its new place). Default 300.
	MoveTimeout int64
	// NominationTimeout: how long the GPUs nominated for a preemptor (or for
	// the job a defragmentation serves) stay reserved. Default EvictTimeout +
	// BindTimeout.
	NominationTimeout int64
	// ReservationTimeout: how long a reservation for the top blocked job
	// lasts before it is recomputed. Default 600.
	ReservationTimeout int64
	// DefaultRunTime estimates the run time of running jobs that gave none,
	// for a reservation's ready time. 0 (the default): unknown, and a
	// reservation that waits for such a job admits no backfill.
	DefaultRunTime int64

	// MaxReservations: how many blocked jobs hold a reservation at once (the
	// top ones in queue order). Default 1; -1: none.
	MaxReservations int
	// MaxPreemptAttempts: preemption plans tried per cycle. Default 4; -1:
	// none.
	MaxPreemptAttempts int
	// MaxDefragAttempts: defragmentation plans tried per cycle. Default 1;
	// -1: none.
	MaxDefragAttempts int
	// MaxMoves: K, the most moves one defragmentation plan may propose.
	// Default 4.
	MaxMoves int
	// MaxPlaceAttempts: pending jobs given to placement per cycle; later jobs
	// get NotTried. 0 (the default): all.
	MaxPlaceAttempts int
	// MaxRepairCandidates bounds the lower-priority jobs a repair considers
	// evicting inside the faulted job's domain. Default 256.
	MaxRepairCandidates int

	// Spares: spare host policies (see SparePolicy), applied deepest level
	// first. None by default.
	Spares []SparePolicy

	// Profile, if not nil, is the workload's typical pod shapes: one-pod jobs
	// then go to the host where they destroy the least expected capacity for
	// them (placement.Profile, placement.Solver.SetProfile) instead of
	// BestFit's fewest free GPUs. A malformed profile makes New fail.
	Profile *placement.Profile

	// Preempter plans evictions for blocked jobs; nil: a PreemptPlanner
	// (package preempt). MaxPreemptAttempts -1 disables preemption.
	Preempter Preempter
	// Defragmenter plans moves for blocked jobs; nil: a DefragPlanner
	// (package defrag). MaxDefragAttempts -1 disables defragmentation.
	Defragmenter Defragmenter
}

// SparePolicy keeps Hosts healthy hosts in every domain of Level as spares:
// only preemptible jobs (filler) may run on them, and a fault under a running
// gang in that domain takes a spare first, evicting its filler (a spare
// whose filler is not of lower priority than the gang is passed over). The counts of
// nested policies add up: a host spared for its rack also counts for its SU.
type SparePolicy struct {
	Level topology.Level
	Hosts int
}

// validate checks c against tree t and fills defaults.
func (c *Config) validate(t *topology.Tree) error {
	if err := c.validateTimes(); err != nil {
		return err
	}
	if err := c.validateLimits(); err != nil {
		return err
	}
	if c.Preempter == nil && c.MaxPreemptAttempts > 0 {
		c.Preempter = &PreemptPlanner{}
	}
	if c.Defragmenter == nil && c.MaxDefragAttempts > 0 {
		c.Defragmenter = &DefragPlanner{}
	}
	return c.validateSpares(t)
}

// validateTimes checks the timeouts and the default run time, setting the
// defaults of those left 0.
func (c *Config) validateTimes() error {
	def := func(v *int64, d int64, name string) error {
		switch {
		case *v < 0:
			return fmt.Errorf("%w: %s %d < 0", ErrInvalid, name, *v)
		case *v == 0:
			*v = d
		}
		return nil
	}
	if err := def(&c.BindTimeout, 60, "BindTimeout"); err != nil {
		return err
	}
	if err := def(&c.EvictTimeout, 120, "EvictTimeout"); err != nil {
		return err
	}
	if err := def(&c.MoveTimeout, 300, "MoveTimeout"); err != nil {
		return err
	}
	if err := def(&c.NominationTimeout, later(c.EvictTimeout, c.BindTimeout), "NominationTimeout"); err != nil {
		return err
	}
	if err := def(&c.ReservationTimeout, 600, "ReservationTimeout"); err != nil {
		return err
	}
	if c.DefaultRunTime < 0 {
		return fmt.Errorf("%w: DefaultRunTime %d < 0", ErrInvalid, c.DefaultRunTime)
	}
	return nil
}

// validateLimits checks the per-cycle limits, setting the defaults of those
// left 0 (-1 turns a count off).
func (c *Config) validateLimits() error {
	count := func(v *int, d int, name string) error {
		switch {
		case *v < -1:
			return fmt.Errorf("%w: %s %d (want -1, 0 for the default, or more)", ErrInvalid, name, *v)
		case *v == 0:
			*v = d
		case *v == -1:
			*v = 0
		}
		return nil
	}
	if err := count(&c.MaxReservations, 1, "MaxReservations"); err != nil {
		return err
	}
	if err := count(&c.MaxPreemptAttempts, 4, "MaxPreemptAttempts"); err != nil {
		return err
	}
	if err := count(&c.MaxDefragAttempts, 1, "MaxDefragAttempts"); err != nil {
		return err
	}
	if c.MaxMoves < 0 || c.MaxPlaceAttempts < 0 || c.MaxRepairCandidates < 0 {
		return fmt.Errorf("%w: MaxMoves, MaxPlaceAttempts and MaxRepairCandidates must be ≥ 0", ErrInvalid)
	}
	if c.MaxMoves == 0 {
		c.MaxMoves = 4
	}
	if c.MaxRepairCandidates == 0 {
		c.MaxRepairCandidates = 256
	}
	return nil
}

// validateSpares checks the spare policies: a named domain level each, at
// most one per level, no negative count.
func (c *Config) validateSpares(t *topology.Tree) error {
	hl := t.HostLevel()
	for i, p := range c.Spares {
		switch {
		case p.Level < 1 || p.Level >= hl:
			return fmt.Errorf("%w: spare policy %d: level %d, want a named domain level 1…%d", ErrInvalid, i, p.Level, hl-1)
		case p.Hosts < 0:
			return fmt.Errorf("%w: spare policy %d: %d hosts", ErrInvalid, i, p.Hosts)
		}
		for _, q := range c.Spares[:i] {
			if q.Level == p.Level {
				return fmt.Errorf("%w: two spare policies for level %s", ErrInvalid, t.LevelName(p.Level))
			}
		}
	}
	return nil
}
