package preempt_test

import (
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
)

// TestCreditKeys checks the credit bound domain by domain against the
// oracle restricted to the domain, as TestSlotKeys does the slot bound: no
// leaf's bound is dearer than the cheapest victim set that fits the
// request there, and a leaf it calls infeasible has none.
func TestCreditKeys(t *testing.T) {
	var p preempt.Planner
	requireLeafKeys(t, 7<<40, func(_ int, s *topology.State, r *placement.Request) ([]topology.DomainID, []preempt.Cost, []bool) {
		return preempt.CreditKeys(&p, s, r)
	})
}

// TestCreditOracle compares Planner.Plan with the credit bound on every
// leaf and without it with the oracle, as TestSlotOracle does the slot
// bound.
func TestCreditOracle(t *testing.T) {
	var with, without preempt.Planner
	preempt.SetCreditBound(&with, 1)
	preempt.SetCreditBound(&without, -1)
	requireBoundOracle(t, 9<<40, &with, &without, func(int) {})
}
