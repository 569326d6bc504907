package placement

import "github.com/blinksched/blink/topology"

// Plan is where a gang goes: its pods in rank order (the pods of set 0 first)
// and the domain that holds them all. It is a value; the caller applies it
// with State.Apply(plan.Delta()). A Plan may be reused across calls: Place
// overwrites it, reusing its buffers.
type Plan struct {
	Job    topology.JobID
	Info   topology.Job
	Pods   []topology.Pod
	Domain topology.DomainID // the required domain, or the root
	Host   topology.HostID   // the host when the required level is the host, else -1
	ops    [1]topology.Op
	sets   []topology.PodSet
}

// Delta returns the Delta adding the gang as job Plan.Job. It shares the
// Plan's buffers: apply it before the Plan is reused.
func (p *Plan) Delta() topology.Delta {
	op := &p.ops[0] // topology.AddJob(p.Job, p.Info, p.Pods...), written in place
	*op = topology.Op{}
	op.Kind, op.Job, op.Info, op.Pods = topology.OpAddJob, p.Job, p.Info, p.Pods
	return topology.Delta{Ops: p.ops[:]}
}
