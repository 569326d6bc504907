package main

import (
	"strings"
	"testing"
)

func TestPreemption(t *testing.T) {
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"victims (17, highest priority 10)", "rack1 |GGGG|GGGG|GGGG|GGGG|GGGG|GGGG|", "rack1 |****|"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
