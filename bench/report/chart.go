package report

import (
	"fmt"
	"image/color"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one line of a chart.
type Series struct {
	Name   string // legend entry; "" for none
	X, Y   []float64
	Dashed bool // a reference line, drawn dashed in grey
}

// Panel is one chart: axes, title and lines. An axis range whose min and max
// are both 0 is fitted to the data.
type Panel struct {
	Title, XLabel, YLabel  string
	Series                 []Series
	XMin, XMax, YMin, YMax float64
	// LegendTopLeft puts the legend in the top-left corner (default:
	// bottom right).
	LegendTopLeft bool
}

// WritePNG draws the panels in a grid of cols columns, row by row, into a
// PNG file of w × h.
func WritePNG(path string, cols int, w, h vg.Length, panels ...Panel) error {
	if len(panels) == 0 || cols < 1 {
		return fmt.Errorf("report: nothing to draw")
	}
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i := range panels {
		p, err := panels[i].plot()
		if err != nil {
			return err
		}
		grid[i/cols][i%cols] = p
	}
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6}
	canvases := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (pn *Panel) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.Title
	p.X.Label.Text = pn.XLabel
	p.Y.Label.Text = pn.YLabel
	p.X.Tick.Marker = plainTicks{}
	p.Y.Tick.Marker = plainTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top = pn.LegendTopLeft
	p.Legend.Left = pn.LegendTopLeft
	next := 0
	for _, s := range pn.Series {
		xy := make(plotter.XYs, len(s.X))
		for i := range xy {
			xy[i].X, xy[i].Y = s.X[i], s.Y[i]
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("report: series %q: %w", s.Name, err)
		}
		if s.Dashed {
			l.Color = color.Gray{Y: 120}
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		} else {
			l.Color = plotutil.Color(next)
			l.Dashes = plotutil.Dashes(0)
			l.Width = vg.Points(1.5)
			next++
		}
		p.Add(l)
		if s.Name != "" {
			p.Legend.Add(s.Name, l)
		}
	}
	if pn.XMin != 0 || pn.XMax != 0 {
		p.X.Min, p.X.Max = pn.XMin, pn.XMax
	}
	if pn.YMin != 0 || pn.YMax != 0 {
		p.Y.Min, p.Y.Max = pn.YMin, pn.YMax
	}
	return p, nil
}

// plainTicks are gonum's default ticks with labels in the shortest form
// ("75", not "75.00").
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
		}
	}
	return ticks
}
