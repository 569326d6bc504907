package main

import (
	"strings"
	"testing"
)

func TestEmbed(t *testing.T) {
	var out strings.Builder
	st, err := run(&out, options{blocks: 1, hours: 3, seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if st.binds == 0 || st.finished == 0 || st.faults == 0 || st.repairs+st.requeued == 0 {
		t.Errorf("a quiet simulation: %+v", st)
	}
	for _, want := range []string{"cluster: 9216 GPUs", "hour", "total:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
