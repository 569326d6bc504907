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
