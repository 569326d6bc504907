package blink

import (
	"fmt"
	"math/bits"
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

// CandsAgree checks hostCands' shortcuts (no masks read in a clean domain,
// no free mask on a host with no free GPU) against the reading of every
// host's masks (hostCandsSlow): in every domain of every level, for pods of
// 1, 2, 3, 4 and 8 GPUs, for a preemptible job of any model and a
// non-preemptible one of model 0, the same candidates in the same order.
func (e *Engine) CandsAgree() error {
	jobs := []job{{spec: JobSpec{Preemptible: true}}, {spec: JobSpec{Models: []int{0}}}}
	for l := range e.t.HostLevel() {
		dlo, dhi := e.t.LevelDomains(l)
		for d := dlo; d < dhi; d++ {
			for i := range jobs {
				for _, g := range []int32{1, 2, 3, 4, 8} {
					want := append([]resCand(nil), e.hostCandsSlow(&jobs[i], d, g)...)
					got := e.hostCands(&jobs[i], d, g)
					if fmt.Sprint(got) != fmt.Sprint(want) {
						return fmt.Errorf("domain %d, job %d, pods of %d GPUs: candidates %v, reading every mask %v", d, i, g, got, want)
					}
				}
			}
		}
	}
	return nil
}

// hostCandsSlow is hostCands reading every host's health, failed,
// nominated and free masks.
func (e *Engine) hostCandsSlow(j *job, d topology.DomainID, g int32) []resCand {
	cands := e.cands[:0]
	lo, hi := e.t.Hosts(d)
	nonPre := !j.spec.Preemptible && e.sp.on()
	ends := e.endsKnown()
	if !ends {
		e.markEvicting(lo, hi)
	}
	for h := lo; h < hi; h++ {
		if e.s.HostHealth(h) != topology.Healthy || nonPre && e.sp.spare(h) || !e.modelOK(j, h) {
			continue
		}
		n := e.t.HostGPUCount(h)
		usable := hostMask(n) &^ e.s.HostFailedMask(h) &^ e.s.HostNominatedMask(h)
		if bits.OnesCount64(usable) < int(g) {
			continue
		}
		free := e.s.HostFreeMask(h)
		nowPods := int32(bits.OnesCount64(free)) / g
		var taken uint64
		if nowPods > 0 {
			taken = lowBits(free, int(nowPods*g))
			cands = append(cands, resCand{ready: e.now, h: h, pods: nowPods, mask: taken})
		}
		if rest := int32(bits.OnesCount64(usable))/g - nowPods; rest > 0 {
			cands = append(cands, resCand{ready: e.laterReady(h, lo, ends), h: h, pods: rest, mask: lowBits(usable&^taken, int(rest*g))})
		}
	}
	e.cands = cands
	return cands
}
