package replay

import (
	"bufio"
	"encoding/json"
	"io"
	"math/bits"

	"github.com/blinksched/blink/bench/openb"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// LogEvent is one line of the log. Fields a kind does not use are left out.
type LogEvent struct {
	T       int64       `json:"t"`
	Kind    string      `json:"kind"`
	Job     string      `json:"job,omitempty"`
	Request *LogRequest `json:"request,omitempty"`
	Pods    []LogPod    `json:"pods,omitempty"`
	Waited  *int64      `json:"waited,omitempty"`
	Code    int         `json:"code,omitempty"`
	Reason  string      `json:"reason,omitempty"`
	Waiting *int        `json:"waiting,omitempty"`
}

// LogRequest is what an arriving pod asks for: gpus whole GPUs (milli 0) or
// a fraction of one GPU (gpus 1, milli 1…999), CPU, memory, and the GPU
// models it accepts (empty: any).
type LogRequest struct {
	GPUs      int32    `json:"gpus"`
	Milli     int32    `json:"milli"`
	CPUMilli  int32    `json:"cpuMilli"`
	MemoryMiB int32    `json:"memoryMiB"`
	Models    []string `json:"models"`
}

// LogPod is where a pod was placed: its host, the host's GPU indices it
// takes (whole, or the one it shares when milli > 0), CPU and memory.
type LogPod struct {
	Host      string `json:"host"`
	GPUs      []int  `json:"gpus"`
	Milli     int32  `json:"milli"`
	CPUMilli  int32  `json:"cpuMilli"`
	MemoryMiB int32  `json:"memoryMiB"`
}

// Event kinds of the log.
const (
	KindArrive = "arrive"
	KindPlace  = "place"
	KindWait   = "wait"
	KindRetry  = "retry"
	KindLeave  = "leave"
	KindGiveUp = "give-up"
)

// logger writes LogEvents as JSON lines; a nil *logger writes nothing. It
// keeps the first write error for flush.
type logger struct {
	w   *bufio.Writer
	enc *json.Encoder
	t   *topology.Tree
	err error
}

func newLogger(w io.Writer, t *topology.Tree) *logger {
	bw := bufio.NewWriterSize(w, 1<<16)
	return &logger{w: bw, enc: json.NewEncoder(bw), t: t}
}

func (l *logger) write(e *LogEvent) {
	if l.err == nil {
		l.err = l.enc.Encode(e)
	}
}

func (l *logger) flush() error {
	if l.err != nil {
		return l.err
	}
	return l.w.Flush()
}

func (l *logger) arrive(t int64, p *openb.Pod, s *openb.Shape) {
	if l == nil {
		return
	}
	req := &LogRequest{GPUs: s.GPUs, Milli: s.Milli, CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB, Models: p.Models}
	if req.Models == nil || s.GPUs == 0 {
		req.Models = []string{}
	}
	l.write(&LogEvent{T: t, Kind: KindArrive, Job: p.Name, Request: req})
}

func (l *logger) place(t int64, p *openb.Pod, pods []topology.Pod, waited int64) {
	if l == nil {
		return
	}
	out := make([]LogPod, len(pods))
	for i, q := range pods {
		gpus := make([]int, 0, bits.OnesCount64(q.GPUs))
		for m := q.GPUs; m != 0; m &= m - 1 {
			gpus = append(gpus, bits.TrailingZeros64(m))
		}
		out[i] = LogPod{Host: l.t.HostName(q.Host), GPUs: gpus, Milli: q.Milli, CPUMilli: q.CPUMilli, MemoryMiB: q.MemoryMiB}
	}
	l.write(&LogEvent{T: t, Kind: KindPlace, Job: p.Name, Pods: out, Waited: &waited})
}

func (l *logger) wait(t int64, p *openb.Pod, r placement.Reason, waiting int) {
	if l == nil {
		return
	}
	l.write(&LogEvent{T: t, Kind: KindWait, Job: p.Name, Code: int(r.Code), Reason: r.Format(l.t), Waiting: &waiting})
}

func (l *logger) retry(t int64, waiting int) {
	if l == nil {
		return
	}
	l.write(&LogEvent{T: t, Kind: KindRetry, Waiting: &waiting})
}

func (l *logger) leave(t int64, p *openb.Pod) {
	if l == nil {
		return
	}
	l.write(&LogEvent{T: t, Kind: KindLeave, Job: p.Name})
}

func (l *logger) giveUp(t int64, p *openb.Pod, waited int64) {
	if l == nil {
		return
	}
	l.write(&LogEvent{T: t, Kind: KindGiveUp, Job: p.Name, Waited: &waited})
}
