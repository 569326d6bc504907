package topology

import (
	"bytes"
	"encoding/binary"
	"math"
)

type decoder struct {
	buf []byte
	err error
}

func (d *decoder) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.err = corrupt("truncated or malformed varint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) i() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.err = corrupt("truncated or malformed varint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// i32 reads a signed value that must fit an int32.
func (d *decoder) i32() int32 {
	v := d.i()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("value %d out of range", v)
		return 0
	}
	return int32(v)
}

// count reads a length, bounded by the bytes left (each element takes ≥ 1).
func (d *decoder) count() int {
	v := d.u()
	if v > uint64(len(d.buf)) {
		d.fail("count %d exceeds the %d bytes left", v, len(d.buf))
		return 0
	}
	return int(v)
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = corrupt(format, args...)
	}
}

func decodeSnapshot(t *Tree, data []byte) (*State, error) {
	if !bytes.HasPrefix(data, snapshotMagic) {
		return nil, corrupt("not a Blink snapshot")
	}
	d := &decoder{buf: data[len(snapshotMagic):]}
	if v := d.u(); d.err == nil && v != snapshotVersion {
		return nil, corrupt("version %d, this build reads %d", v, snapshotVersion)
	}
	hosts, gpus, doms, fp := d.u(), d.u(), d.u(), d.u()
	if d.err == nil && (hosts != uint64(t.NumHosts()) || gpus != uint64(t.NumGPUs()) ||
		doms != uint64(t.NumDomains()) || fp != treeFingerprint(t)) {
		return nil, corrupt("snapshot of another tree (%d hosts, %d GPUs)", hosts, gpus)
	}
	s := NewState(t)
	bound := d.u()
	if bound > uint64(MaxJobID)+1 {
		d.fail("job id bound %d", bound)
	}
	d.jobs(s, bound) // ids are checked against the bound before a table grows to them
	d.nominations(s, bound)
	d.health(s)
	for h := range s.hostGen {
		v := d.u()
		if v > math.MaxUint32 {
			d.fail("host generation %d", v)
		}
		s.hostGen[h] = uint32(v)
	}
	if d.err == nil && len(d.buf) != 0 {
		d.fail("%d trailing bytes", len(d.buf))
	}
	if d.err != nil {
		return nil, d.err
	}
	if int(bound) < len(s.jobs) {
		return nil, corrupt("job id bound %d below the jobs present", bound)
	}
	if n := int(bound) - len(s.jobs); n > 0 {
		s.appendJobRecs(n)
	}
	return s, nil
}

// apply applies one operation, turning its error into a corruption error.
func (d *decoder) apply(s *State, op Op) {
	if d.err != nil {
		return
	}
	if err := s.Apply(Delta{Ops: []Op{op}}); err != nil {
		d.fail("%v", err)
	}
}

func (d *decoder) jobs(s *State, bound uint64) {
	n := d.count()
	prev := int64(-1)
	for range n {
		if d.err != nil {
			return
		}
		id := int64(d.u())
		if id <= prev || uint64(id) >= bound {
			d.fail("job id %d out of order or not below the bound %d", id, bound)
			return
		}
		prev = id
		info := d.jobInfo()
		np := d.count()
		pods := make([]Pod, np)
		for i := range pods {
			h := d.u()
			if h > math.MaxInt32 {
				d.fail("host %d", h)
			}
			pods[i] = Pod{Host: HostID(h), GPUs: d.u(), Milli: d.i32(), CPUMilli: d.i32(), MemoryMiB: d.i32()}
		}
		d.apply(s, AddJob(JobID(id), info, pods...))
	}
}

func (d *decoder) jobInfo() Job {
	var in Job
	in.Priority = d.i32()
	flags := d.u()
	in.Preemptible, in.Movable, in.Exclusive, in.HasEnd = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
	in.End = d.i()
	in.Required, in.Preferred = d.level(), d.level()
	if ns := d.count(); ns > 0 {
		in.Sets = make([]PodSet, ns)
		for k := range in.Sets {
			st := &in.Sets[k]
			st.Count, st.GPUs, st.Milli, st.CPUMilli, st.MemoryMiB, st.SliceSize = d.i32(), d.i32(), d.i32(), d.i32(), d.i32(), d.i32()
			st.SliceLevel = d.level()
		}
	}
	return in
}

func (d *decoder) level() Level {
	v := d.i()
	if v < int64(NoLevel) || v > math.MaxInt8 {
		d.fail("level %d", v)
		return NoLevel
	}
	return Level(v)
}

func (d *decoder) nominations(s *State, bound uint64) {
	n := d.count()
	for range n {
		var nom Nomination
		j := d.u()
		if j >= bound {
			d.fail("nominee %d not below the job id bound %d", j, bound)
			return
		}
		nom.Job, nom.Priority, nom.Ready, nom.Expiry = JobID(j), d.i32(), d.i(), d.i()
		nom.GPUs = d.gpus()
		d.apply(s, Nominate(nom))
	}
}

func (d *decoder) gpus() []GPUID {
	n := d.count()
	out := make([]GPUID, 0, n)
	g := int64(-1)
	for range n {
		delta := d.u()
		g += int64(delta)
		if delta == 0 || delta > math.MaxInt32 || g > math.MaxInt32 {
			d.fail("GPU %d", g)
			return nil
		}
		out = append(out, GPUID(g))
	}
	return out
}

func (d *decoder) health(s *State) {
	n := d.count()
	h := int64(-1)
	for range n {
		delta := d.u()
		h += int64(delta)
		v := d.u()
		if delta == 0 || delta > math.MaxInt32 || h > math.MaxInt32 || v == 0 || v > uint64(Failed) {
			d.fail("host %d health %d", h, v)
			return
		}
		d.apply(s, SetHostHealth(HostID(h), Health(v)))
	}
	for _, g := range d.gpus() {
		d.apply(s, SetGPUHealth(g, Failed))
	}
}
