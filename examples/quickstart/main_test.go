package main

import (
	"strings"
	"testing"
)

func TestQuickstart(t *testing.T) {
	var out strings.Builder
	if err := run(&out, 1); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"nvl72-train", "block0/su0/rack", "no fit", "GPUs in use"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
