package blink

import (
	"fmt"
	"strings"

	"github.com/blinksched/blink/topology"
)

// Fingerprint renders every field of the engine's own state that a report
// may change (not scratch buffers): jobs, queue, timers, faults, nominees,
// spares. Tests compare it before and after a rejected report.
func (e *Engine) Fingerprint() string {
	var b strings.Builder
	fmt.Fprintf(&b, "now %d seq %d free %v queue %v faulted %v requeued %v nominees %v fail %d\n",
		e.now, e.seq, e.free, e.queue, e.faulted, e.requeued, e.nominees, e.applyFailures)
	for i := range e.jobs {
		j := &e.jobs[i]
		fmt.Fprintf(&b, "%d: st %d gen %d seq %d sub %d dl %d start %d flt %v q %v nom %d/%d/%d/%d wait %d for %d/%d old %v prio %d\n",
			i, j.state, j.gen, j.seq, j.submit, j.deadline, j.started, j.faulted, j.inQueue,
			j.nom, j.nomDomain, j.nomReady, j.nomExpiry, j.waitFor, j.forJob, j.forGen, j.oldPods, j.spec.Priority)
	}
	for k := range e.timers {
		fmt.Fprintf(&b, "timers %d: %v\n", k, e.timers[k].q[e.timers[k].head:])
	}
	fmt.Fprintf(&b, "spares %v %v %v %v\n", e.sp.isSpare, e.sp.count, e.sp.dirty, e.sp.isDirty)
	return b.String()
}

// ReadyAgrees checks the reservation's shortcut: in every domain of every
// level, laterReady (which reads a host's jobs only when some job may end)
// equals hostReady on every healthy host where a pod holds a usable GPU —
// the hosts hostCands asks it about.
func (e *Engine) ReadyAgrees() error {
	ends := e.endsKnown()
	for l := range e.t.HostLevel() {
		dlo, dhi := e.t.LevelDomains(l)
		for d := dlo; d < dhi; d++ {
			lo, hi := e.t.Hosts(d)
			e.markEvicting(lo, hi)
			for h := lo; h < hi; h++ {
				usable := hostMask(e.t.HostGPUCount(h)) &^ e.s.HostFailedMask(h) &^ e.s.HostNominatedMask(h)
				if e.s.HostHealth(h) != topology.Healthy || usable&^e.s.HostFreeMask(h) == 0 {
					continue
				}
				if got, want := e.laterReady(h, lo, ends), e.hostReady(h); got != want {
					return fmt.Errorf("host %d in domain %d: ready at %d, its jobs say %d", h, d, got, want)
				}
			}
		}
	}
	return nil
}
