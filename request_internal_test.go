package blink

import (
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
)

// TestRequestFields guards Engine.request, which writes the engine's
// placement.Request field by field instead of as a composite literal: a
// field added to Request must be written there too (or a stale value from
// the last job would leak into the next), and then listed here.
func TestRequestFields(t *testing.T) {
	testkit.RequireFields(t, placement.Request{}, "Engine.request", "Job", "Priority", "Preemptible", "HasEnd", "End",
		"Sets", "Required", "Preferred", "Exclusive", "Models", "Eligible", "Restriction", "Policy")
}

// TestBindFields guards Engine.bind and Engine.waitFor, which write each
// Bind and Waiting decision field by field into a slot of the reused
// decisions' buffer: a field added to either must be written there too (or
// the slot would keep a value from the last cycle), and then listed here.
func TestBindFields(t *testing.T) {
	testkit.RequireFields(t, Bind{}, "Engine.bind", "Job", "Pods", "Sizes", "Domain")
	testkit.RequireFields(t, Waiting{}, "Engine.waitFor", "Job", "Reason")
}
