package main

import (
	"strings"
	"testing"
)

func TestSlurmExample(t *testing.T) {
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"levels, root first: switch2 (1), switch1 (3), switch0 (9)",
		"ib-leaf1: h100-[001-008] (64 GPUs)",
		"pretrain: 16 pods within switch1 ib-core/ib-spine1",
		"finetune: 6 pods within switch0",
		"l40s-01   GPUs [0 1]",
		"too-big: no fit: required switch1",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
