package preempt

import (
	"cmp"
	"fmt"
	"math"
)

// NoPriority is Cost.Priority when there are no victims: below every
// priority a job can have.
const NoPriority int32 = math.MinInt32

// Cost is what evicting a victim set costs, compared lexicographically:
// first the highest priority among the victims, then their number, then the
// milli-GPUs they hold in all (every pod, also outside the domain the request
// goes to). Among victim sets of equal Cost the Planner's answer is the first
// its search order meets (see the package documentation): a deterministic
// tie-break that is not part of the Cost.
type Cost struct {
	Priority int32 // highest victim priority; NoPriority when there are none
	Victims  int   // number of victim jobs
	Milli    int64 // milli-GPUs held by the victims
}

// Compare returns -1, 0 or +1 as c is cheaper than, as cheap as, or dearer
// than d.
func (c Cost) Compare(d Cost) int {
	switch {
	case c.Priority != d.Priority:
		return cmp.Compare(c.Priority, d.Priority)
	case c.Victims != d.Victims:
		return cmp.Compare(c.Victims, d.Victims)
	}
	return cmp.Compare(c.Milli, d.Milli)
}

// Less reports whether c is strictly cheaper than d.
func (c Cost) Less(d Cost) bool {
	switch {
	case c.Priority != d.Priority:
		return c.Priority < d.Priority
	case c.Victims != d.Victims:
		return c.Victims < d.Victims
	}
	return c.Milli < d.Milli
}

// String renders the cost as "priority 10, 2 victims, 3500 milli-GPU".
func (c Cost) String() string {
	if c.Victims == 0 {
		return "no victims"
	}
	return fmt.Sprintf("priority %d, %d victims, %d milli-GPU", c.Priority, c.Victims, c.Milli)
}

// maxCost is dearer than every real cost: the bound of an empty search.
var maxCost = Cost{Priority: math.MaxInt32, Victims: math.MaxInt32, Milli: math.MaxInt64}

func cmp3(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
