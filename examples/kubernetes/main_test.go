package main

import (
	"strings"
	"testing"
)

func TestKubernetesExample(t *testing.T) {
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"16 nodes, 128 GPUs",
		"skipped: node gke-system-01 (items[16]) has no label cloud.google.com/gce-topology-block",
		"marked draining: gke-train-a3-02 (unschedulable)",
		"marked failed: gke-train-a3-07 (not ready)",
		"bind pod train-0 → node gke-train-a3-01, nvidia.com/gpu [0-7]  [blk-a/sb-1]",
		"bind pod train-5 → node gke-train-a3-08, nvidia.com/gpu [0-7]  [blk-a/sb-2]",
		"bind pod notebook-1 → node gke-train-a3-09, nvidia.com/gpu [0] (500/1000 of it)",
		"wide: no fit: required cloud.google.com/gce-topology-subblock: the largest cloud.google.com/gce-topology-subblock fits 4 of 5 pods",
		"bind pod eval-2 → node gke-train-a3-12, nvidia.com/gpu [0-7]  [blk-b/sb-1]",
		"128 GPUs: 73 in use, 39 free, 16 on draining or failed nodes",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// Nothing lands on the cordoned or NotReady node.
	for _, bad := range []string{"→ node gke-train-a3-02,", "→ node gke-train-a3-07,"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("a pod was bound to an unhealthy node (%s):\n%s", bad, out.String())
		}
	}
}
