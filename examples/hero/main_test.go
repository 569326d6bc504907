package main

import (
	"strings"
	"testing"
)

func TestHero(t *testing.T) {
	var out strings.Builder
	if err := run(&out, 28); err != nil { // 28 blocks: the smallest cluster that holds the job
		t.Fatal(err)
	}
	for _, want := range []string{"training over", "inference rank 3 →", "(spare)", "engine and State consistent"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
