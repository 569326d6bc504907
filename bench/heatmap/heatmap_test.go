package heatmap

import (
	"bytes"
	"image/png"
	"path/filepath"
	"testing"

	"github.com/blinksched/blink/topology"
)

func testState(t *testing.T) *topology.State {
	t.Helper()
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"su", "rack"}, FanOut: []int{2, 3, 4}, GPUsPerHost: 4})
	if err != nil {
		t.Fatal(err)
	}
	s := topology.NewState(tree)
	ops := []topology.Op{
		topology.AddJob(0, topology.Job{Priority: 1}, topology.Pod{Host: 0, GPUs: 0b0011}),
		topology.AddJob(1, topology.Job{Priority: 100}, topology.Pod{Host: 1, GPUs: 0b0001, Milli: 500}),
		topology.SetHostHealth(5, topology.Draining),
		topology.SetHostHealth(6, topology.Failed),
		topology.SetGPUHealth(40, topology.Failed),
	}
	for _, op := range ops {
		if err := s.Apply(topology.Delta{Ops: []topology.Op{op}}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestDraw checks the layout (3 racks per row, 2 rows; 4 hosts × 4 GPUs per
// tile) and the colours of a few cells.
func TestDraw(t *testing.T) {
	s := testState(t)
	img := Draw(s, Options{Cell: 2})
	// Tiles: 4 GPUs × 2 px + 1 px gap wide, 4 hosts × 2 px + 1 px tall.
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != 3*9+1 || h != 2*9+1 {
		t.Fatalf("size %d×%d", w, h)
	}
	at := func(host, gpu int) [4]uint8 { // the first tile only: hosts 0…3
		off := img.PixOffset(1+gpu*2, 1+host*2)
		return [4]uint8(img.Pix[off : off+4])
	}
	free := [4]uint8{freeColor.R, freeColor.G, freeColor.B, 0xff}
	if at(0, 2) != free || at(0, 0) == free || at(0, 0) != at(0, 1) {
		t.Errorf("host 0: job 0 on GPUs 0–1, GPU 2 free: %v %v %v", at(0, 0), at(0, 1), at(0, 2))
	}
	if at(1, 0) == free || at(1, 0) == at(0, 0) {
		t.Errorf("host 1 GPU 0 is shared by job 1: %v", at(1, 0))
	}
	byPrio := Draw(s, Options{Cell: 2, ColorBy: ByPriority})
	if byPrio.Bounds() != img.Bounds() {
		t.Error("colouring changed the layout")
	}
}

func TestWritePNG(t *testing.T) {
	s := testState(t)
	path := filepath.Join(t.TempDir(), "map.png")
	if err := WritePNG(path, s, Options{}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, s, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&buf); err != nil {
		t.Fatal(err)
	}
	if err := WritePNG(filepath.Join(t.TempDir(), "no", "dir.png"), s, Options{}); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}
