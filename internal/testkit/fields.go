package testkit

import (
	"reflect"
	"slices"
	"testing"
)

// RequireFields fails t unless the struct v has exactly the fields written
// (in any order): the guard of code that writes a reused struct field by
// field (writer names it), so that a field added to the struct is written
// there too, or its value from the last use would stay.
func RequireFields(t testing.TB, v any, writer string, written ...string) {
	t.Helper()
	rt := reflect.TypeOf(v)
	var got []string
	for i := range rt.NumField() {
		got = append(got, rt.Field(i).Name)
	}
	want := slices.Clone(written)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s has fields %v; %s writes %v: update it", rt, got, writer, want)
	}
}
