// Package heatmap draws a cluster's occupancy as a PNG heat map: one tile
// per domain of a level (a rack, by default the last named level), tiles in
// rows in depth-first order, and inside a tile one row of cells per host and
// one cell per GPU, coloured by the job using it (or by its priority).
// Free GPUs are pale grey, failed GPUs black, the hosts of a draining host
// darker grey, a failed host's GPUs dark red; a GPU shared by fractional pods
// takes its first holder's colour, lightened. Only the standard library's
// image packages are used.
//
//	img := heatmap.Draw(state, heatmap.Options{Cell: 4})
//	err := heatmap.WritePNG("before.png", state, heatmap.Options{})
package heatmap

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"

	"github.com/blinksched/blink/topology"
)

// ColorBy chooses what a used GPU's colour says.
type ColorBy uint8

const (
	// ByJob: one colour per job (a hue from its id).
	ByJob ColorBy = iota
	// ByPriority: blue (lowest priority in the cluster) to red (highest).
	ByPriority
)

// Options shape the picture. The zero value is usable.
type Options struct {
	// Cell is the side of one GPU's cell in pixels (default 4).
	Cell int
	// Level is the level whose domains are the tiles (default: the last
	// named level; the root for a tree without named levels).
	Level topology.Level
	// PerRow is the number of tiles per row (default: the children of the
	// tiles' parent, e.g. 8 racks per NVL72 SU, at most 32).
	PerRow  int
	ColorBy ColorBy
}

var (
	freeColor     = color.RGBA{0xe8, 0xe8, 0xe8, 0xff}
	failedColor   = color.RGBA{0x10, 0x10, 0x10, 0xff}
	deadHostColor = color.RGBA{0x70, 0x10, 0x10, 0xff}
	drainColor    = color.RGBA{0xa0, 0xa0, 0xa0, 0xff}
	background    = color.RGBA{0xff, 0xff, 0xff, 0xff}
)

// Draw renders s. O(GPUs).
func Draw(s *topology.State, o Options) *image.RGBA {
	t := s.Tree()
	o = o.withDefaults(t)
	lo, hi := levelTiles(t, o.Level)
	n := int(hi - lo)
	// A tile is as tall as its largest host count and as wide as its widest
	// host.
	rowsPer, colsPer := 1, 1
	for d := lo; d < hi; d++ {
		hlo, hhi := t.Hosts(d)
		rowsPer = max(rowsPer, int(hhi-hlo))
		for h := hlo; h < hhi; h++ {
			colsPer = max(colsPer, t.HostGPUCount(h))
		}
	}
	c, gap := o.Cell, max(1, o.Cell/2)
	tileW, tileH := colsPer*c+gap, rowsPer*c+gap
	rows := (n + o.PerRow - 1) / o.PerRow
	img := image.NewRGBA(image.Rect(0, 0, max(1, min(n, o.PerRow)*tileW+gap), max(1, rows*tileH+gap)))
	fill(img, img.Bounds(), background)
	minP, maxP := priorities(s)
	var holders []topology.JobID
	for i := range n {
		d := lo + topology.DomainID(i)
		x0, y0 := gap+(i%o.PerRow)*tileW, gap+(i/o.PerRow)*tileH
		hlo, hhi := t.Hosts(d)
		for h := hlo; h < hhi; h++ {
			glo, ghi := t.HostGPUs(h)
			y := y0 + int(h-hlo)*c
			for g := glo; g < ghi; g++ {
				x := x0 + int(g-glo)*c
				holders = s.GPUHolders(holders[:0], g)
				col := cellColor(s, h, g, holders, o.ColorBy, minP, maxP)
				fill(img, image.Rect(x, y, x+c, y+c), col)
			}
		}
	}
	return img
}

func (o Options) withDefaults(t *topology.Tree) Options {
	if o.Cell <= 0 {
		o.Cell = 4
	}
	if o.Level <= 0 || o.Level >= t.HostLevel() {
		o.Level = t.HostLevel() - 1
	}
	if o.PerRow <= 0 {
		o.PerRow = 1
		if lo, _ := levelTiles(t, o.Level); o.Level > 0 {
			if p := t.Parent(lo); p >= 0 {
				clo, chi := t.Children(p)
				o.PerRow = int(chi - clo)
			}
		}
		o.PerRow = min(max(o.PerRow, 1), 32)
	}
	return o
}

func levelTiles(t *topology.Tree, l topology.Level) (topology.DomainID, topology.DomainID) {
	return t.LevelDomains(l)
}

// cellColor is GPU g's colour (of host h).
func cellColor(s *topology.State, h topology.HostID, g topology.GPUID, holders []topology.JobID, by ColorBy, minP, maxP int32) color.RGBA {
	switch {
	case s.HostHealth(h) == topology.Failed:
		return deadHostColor
	case s.GPUFailed(g):
		return failedColor
	case len(holders) == 0 && s.HostHealth(h) == topology.Draining:
		return drainColor
	case len(holders) == 0:
		return freeColor
	}
	var col color.RGBA
	if by == ByPriority {
		info, _ := s.JobInfo(holders[0])
		col = priorityColor(info.Priority, minP, maxP)
	} else {
		col = jobColor(holders[0])
	}
	if s.GPUMilli(g) > 0 || len(holders) > 1 { // shared by fractional pods
		col = lighten(col)
	}
	return col
}

// jobColor spreads job ids over hues by the golden ratio.
func jobColor(j topology.JobID) color.RGBA {
	h := math.Mod(float64(j)*0.618033988749895, 1)
	return hsv(h, 0.65, 0.85)
}

// priorityColor maps a priority to blue … red on a log scale.
func priorityColor(p, minP, maxP int32) color.RGBA {
	f := 0.0
	if maxP > minP {
		f = math.Log1p(float64(p-minP)) / math.Log1p(float64(maxP-minP))
	}
	return hsv((1-f)*0.66, 0.75, 0.9)
}

func priorities(s *topology.State) (lo, hi int32) {
	lo, hi = math.MaxInt32, math.MinInt32
	for j := range s.JobIDBound() {
		if info, ok := s.JobInfo(j); ok {
			lo, hi = min(lo, info.Priority), max(hi, info.Priority)
		}
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}

func lighten(c color.RGBA) color.RGBA {
	return color.RGBA{c.R/2 + 0x80, c.G/2 + 0x80, c.B/2 + 0x80, 0xff}
}

func hsv(h, s, v float64) color.RGBA {
	i := int(h * 6)
	f := h*6 - float64(i)
	p, q, t := v*(1-s), v*(1-f*s), v*(1-(1-f)*s)
	var r, g, b float64
	switch i % 6 {
	case 0:
		r, g, b = v, t, p
	case 1:
		r, g, b = q, v, p
	case 2:
		r, g, b = p, v, t
	case 3:
		r, g, b = p, q, v
	case 4:
		r, g, b = t, p, v
	default:
		r, g, b = v, p, q
	}
	return color.RGBA{uint8(r * 255), uint8(g * 255), uint8(b * 255), 0xff}
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		off := img.PixOffset(r.Min.X, y)
		for x := r.Min.X; x < r.Max.X; x++ {
			img.Pix[off], img.Pix[off+1], img.Pix[off+2], img.Pix[off+3] = c.R, c.G, c.B, c.A
			off += 4
		}
	}
}

// Encode writes s's heat map to w as PNG.
func Encode(w io.Writer, s *topology.State, o Options) error {
	return png.Encode(w, Draw(s, o))
}

// WritePNG writes s's heat map to the file path.
func WritePNG(path string, s *topology.State, o Options) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heatmap: %w", err)
	}
	if err := Encode(f, s, o); err != nil {
		f.Close()
		return fmt.Errorf("heatmap: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("heatmap: %w", err)
	}
	return nil
}
