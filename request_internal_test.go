package blink

import (
	"reflect"
	"slices"
	"testing"

	"github.com/blinksched/blink/placement"
)

// TestRequestFields guards Engine.request, which writes the engine's
// placement.Request field by field instead of as a composite literal: a
// field added to Request must be written there too (or a stale value from
// the last job would leak into the next), and then listed here.
func TestRequestFields(t *testing.T) {
	written := []string{"Job", "Priority", "Preemptible", "HasEnd", "End", "Sets", "Required", "Preferred",
		"Exclusive", "Models", "Eligible", "Restriction", "Policy"}
	var got []string
	rt := reflect.TypeOf(placement.Request{})
	for i := range rt.NumField() {
		got = append(got, rt.Field(i).Name)
	}
	slices.Sort(got)
	slices.Sort(written)
	if !slices.Equal(got, written) {
		t.Fatalf("placement.Request has fields %v; Engine.request writes %v: update it", got, written)
	}
}
