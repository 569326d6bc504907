package report

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// ShowAfter is how long a run goes on before its progress bar appears: runs
// shorter than this print nothing.
const ShowAfter = time.Second

// Progress is a progress bar on a writer (stderr) that appears only once the
// run has lasted ShowAfter, so short runs and tests print nothing. The zero
// value and a nil *Progress do nothing.
type Progress struct {
	w     io.Writer
	total int64
	desc  string
	start time.Time
	bar   *progressbar.ProgressBar
}

// NewProgress starts the clock of a run of total steps described by desc.
// A nil w gives a Progress that never shows.
func NewProgress(w io.Writer, total int64, desc string) *Progress {
	return &Progress{w: w, total: total, desc: desc, start: time.Now()}
}

// Set reports that done of the total steps are done. It is cheap enough to
// call every few thousand events: it reads the clock, and redraws at most ten
// times a second.
func (p *Progress) Set(done int64) {
	if p == nil || p.w == nil {
		return
	}
	if p.bar == nil {
		if time.Since(p.start) < ShowAfter {
			return
		}
		p.bar = progressbar.NewOptions64(p.total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.desc),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionOnCompletion(func() { io.WriteString(p.w, "\n") }))
	}
	p.bar.Set64(done)
}

// Finish completes the bar, if it is showing.
func (p *Progress) Finish() {
	if p == nil || p.bar == nil {
		return
	}
	p.bar.Finish()
}
