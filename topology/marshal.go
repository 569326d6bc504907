package topology

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
)

// Snapshot format, version 1 (all integers varints; signed ones zig-zag):
//
//	"BLNK" version
//	fingerprint of the Tree (hosts, GPUs, domains, FNV-64 of the layout)
//	job id bound
//	jobs:        count, then per job ascending: id, attributes, sets, pods
//	nominations: count, then per nominee ascending: job, priority, ready, expiry, GPUs (delta-coded)
//	host health: count, then (host delta, health) for hosts not healthy
//	failed GPUs: count, then GPU ids (delta-coded)
//	host generations: one per host
//
// The snapshot holds primary data only; aggregates are rebuilt on decoding.
const snapshotVersion = 1

var snapshotMagic = []byte("BLNK")

// MarshalBinary encodes the State (not its Tree) in the versioned snapshot
// format. Equal States give equal bytes.
func (s *State) MarshalBinary() ([]byte, error) {
	e := encoder{buf: append([]byte(nil), snapshotMagic...)}
	e.u(snapshotVersion)
	e.fingerprint(s.t)
	e.u(uint64(len(s.jobs)))
	e.u(uint64(s.nJobs))
	for j := range s.jobs {
		if s.jobs[j].live {
			e.job(s, JobID(j))
		}
	}
	e.u(uint64(s.NumNominations()))
	for j := range s.jobs {
		if k := s.jobs[j].nom; k >= 0 {
			e.nomination(&s.noms[k].Nomination)
		}
	}
	e.health(s)
	for _, g := range s.hostGen {
		e.u(uint64(g))
	}
	return e.buf, nil
}

type encoder struct{ buf []byte }

func (e *encoder) u(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) i(v int64)  { e.buf = binary.AppendVarint(e.buf, v) }

func treeFingerprint(t *Tree) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, v := range [][]int32{t.hostGPU, t.hostParent, t.domParent, t.hostCPU, t.hostMem} {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:4], uint32(x))
			h.Write(b[:4])
		}
	}
	for _, m := range t.hostModel {
		binary.LittleEndian.PutUint16(b[:2], m)
		h.Write(b[:2])
	}
	return h.Sum64()
}

func (e *encoder) fingerprint(t *Tree) {
	e.u(uint64(t.NumHosts()))
	e.u(uint64(t.NumGPUs()))
	e.u(uint64(t.NumDomains()))
	e.u(treeFingerprint(t))
}

func (e *encoder) job(s *State, id JobID) {
	r := &s.jobs[id]
	in := &r.info
	e.u(uint64(id))
	e.i(int64(in.Priority))
	e.u(uint64(b2i(in.Preemptible) | b2i(in.Movable)<<1 | b2i(in.Exclusive)<<2 | b2i(in.HasEnd)<<3))
	e.i(in.End)
	e.i(int64(in.Required))
	e.i(int64(in.Preferred))
	e.u(uint64(len(in.Sets)))
	for _, set := range in.Sets {
		for _, v := range []int32{set.Count, set.GPUs, set.Milli, set.CPUMilli, set.MemoryMiB, set.SliceSize, int32(set.SliceLevel)} {
			e.i(int64(v))
		}
	}
	e.u(uint64(r.n))
	for p := r.first; p >= 0; p = s.pods[p].jnext {
		pod := &s.pods[p].Pod
		e.u(uint64(pod.Host))
		e.u(pod.GPUs)
		e.i(int64(pod.Milli))
		e.i(int64(pod.CPUMilli))
		e.i(int64(pod.MemoryMiB))
	}
}

func (e *encoder) nomination(n *Nomination) {
	e.u(uint64(n.Job))
	e.i(int64(n.Priority))
	e.i(n.Ready)
	e.i(n.Expiry)
	e.gpus(n.GPUs)
}

func (e *encoder) gpus(gs []GPUID) {
	e.u(uint64(len(gs)))
	prev := GPUID(-1)
	for _, g := range gs {
		e.u(uint64(g - prev))
		prev = g
	}
}

func (e *encoder) health(s *State) {
	var sick []HostID
	for h := range s.hostFlags {
		if s.hostFlags[h]&flagHealthMask != 0 {
			sick = append(sick, HostID(h))
		}
	}
	e.u(uint64(len(sick)))
	prev := HostID(-1)
	for _, h := range sick {
		e.u(uint64(h - prev))
		e.u(uint64(s.hostFlags[h] & flagHealthMask))
		prev = h
	}
	var failed []GPUID
	for g := range s.t.NumGPUs() {
		if testBit(s.failed, g) {
			failed = append(failed, GPUID(g))
		}
	}
	e.gpus(failed)
}

// UnmarshalBinary replaces the State's content with a snapshot taken by
// MarshalBinary of a State on the same Tree. A snapshot of another Tree, of
// another version, truncated or corrupt returns an error wrapping ErrCorrupt,
// and the State is unchanged; it never panics.
func (s *State) UnmarshalBinary(data []byte) error {
	if s == nil || s.t == nil {
		return fmt.Errorf("%w: UnmarshalBinary needs a State made by NewState", ErrInvalid)
	}
	n, err := decodeSnapshot(s.t, data)
	if err != nil {
		return err
	}
	n.touches = s.touches
	n.touches.seq += TouchLogSize + 1 // readers of the touch log must start over
	*s = *n
	return nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
