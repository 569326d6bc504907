package fgd

import (
	"gonum.org/v1/plot/vg"

	"github.com/blinksched/blink/bench/report"
)

// PaperFGD is the FGD paper's published allocation (%) of its FGD policy on
// openb_pod_list_default at 100% and 130% arrived (mean of 10 seeds).
var PaperFGD = [2]float64{95.23, 95.39}

// Plot draws the summaries' curves like the FGD paper's Fig. 9(a) into a PNG
// at path: GPU allocation ratio against arrived GPU request, both in percent
// of capacity, over the whole range (left) and zoomed on 70…130% (right),
// with the ideal min(arrived, 100) and the paper's FGD points (100% and
// 130%) as dashed references.
func Plot(path string, sums []Summary) error {
	x := make([]float64, CurveLen)
	ideal := make([]float64, CurveLen)
	for k := range x {
		x[k], ideal[k] = float64(k), min(float64(k), 100)
	}
	var lines []report.Series
	for i := range sums {
		lines = append(lines, report.Series{Name: sums[i].Policy, X: x, Y: sums[i].Curve[:]})
	}
	seeds := ""
	if len(sums) > 0 {
		seeds = ", seeds " + formatSeeds(sums[0].Seeds)
	}
	full := report.Panel{Title: "GPU allocation" + seeds, XLabel: "arrived GPU request (% of capacity)",
		YLabel: "GPU allocation ratio (%)", XMin: 0, XMax: MaxArrived, YMin: 0, YMax: 100, LegendTopLeft: true,
		Series: append([]report.Series{{Name: "ideal", X: x, Y: ideal, Dashed: true}}, lines...)}
	zoom := report.Panel{Title: "zoom", XLabel: "arrived GPU request (% of capacity)",
		YLabel: "GPU allocation ratio (%)", XMin: 70, XMax: MaxArrived, YMin: 70, YMax: 100,
		Series: append([]report.Series{{Name: "FGD (paper)", X: []float64{100, 130}, Y: PaperFGD[:], Dashed: true}}, lines...)}
	return report.WritePNG(path, 2, 26*vg.Centimeter, 11*vg.Centimeter, full, zoom)
}
