package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"
)

func TestProgress(t *testing.T) {
	var nilBar *Progress
	nilBar.Set(1) // no panic
	nilBar.Finish()
	NewProgress(nil, 10, "x").Set(5)

	var w bytes.Buffer
	p := NewProgress(&w, 10, "run")
	p.Set(3)
	if w.Len() != 0 {
		t.Fatalf("a run shorter than %v printed %q", ShowAfter, w.String())
	}
	p.start = p.start.Add(-2 * time.Second)
	p.Set(5)
	p.Finish()
	if out := w.String(); !strings.Contains(out, "run") || !strings.Contains(out, "10/10") {
		t.Errorf("bar output %q", out)
	}
}

func TestWritePNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.png")
	if err := WritePNG(path, 1, 10*vg.Centimeter, 8*vg.Centimeter); err == nil {
		t.Error("no panels: no error")
	}
	x := []float64{0, 1, 2}
	err := WritePNG(path, 2, 20*vg.Centimeter, 16*vg.Centimeter,
		Panel{Title: "a", Series: []Series{{Name: "s", X: x, Y: x}, {Name: "ref", X: x, Y: x, Dashed: true}}},
		Panel{Title: "b", XMin: 0, XMax: 3, YMin: 0, YMax: 3, LegendTopLeft: true, Series: []Series{{X: x, Y: x}}},
		Panel{Title: "c", Series: []Series{{X: x, Y: x}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("%d bytes, %v", len(b), err)
	}
}
