package whatif

import (
	"fmt"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Request converts the scenario's request into a placement.Request for job
// id. Models are looked up by name: names no host has are dropped, and if
// none is left of a non-empty list, noModel is true (the request is a no-fit,
// not an error). Malformed requests and unknown levels are errors wrapping
// ErrInvalid, named by their JSON fields.
func (c *Cluster) Request(r *Request, id topology.JobID) (req placement.Request, noModel bool, err error) {
	t := c.Tree
	if r.Name != "" && slices.Contains(c.Jobs, r.Name) {
		return req, false, fmt.Errorf("%w: request: name %q is a running job's", ErrInvalid, r.Name)
	}
	levels := [3]topology.Level{}
	for i, name := range [3]string{r.RequiredLevel, r.PreferredLevel, r.SliceLevel} {
		levels[i] = topology.NoLevel
		if name == "" {
			continue
		}
		l, ok := t.LevelByName(name)
		if !ok {
			key := [3]string{"requiredLevel", "preferredLevel", "sliceLevel"}[i]
			return req, false, fmt.Errorf("%w: request: unknown %s %q%s", ErrInvalid, key, name, levelList(t))
		}
		levels[i] = l
	}
	if err := checkRequest(t, r, levels[0], levels[1], levels[2]); err != nil {
		return req, false, fmt.Errorf("%w: request: %s", ErrInvalid, err)
	}
	req = placement.Request{Job: id, Priority: r.Priority, Preemptible: r.Preemptible,
		Sets: []placement.PodSet{{Pods: r.Pods, GPUs: r.GPUs, Milli: r.Milli, CPUMilli: r.CPUMilli,
			MemoryMiB: r.MemoryMiB, SliceSize: r.SliceSize, SliceLevel: levels[2]}},
		Required: levels[0], Preferred: levels[1], Exclusive: r.Exclusive}
	for _, name := range r.Models {
		if m, ok := t.ModelByName(name); ok && !slices.Contains(req.Models, m) {
			req.Models = append(req.Models, m)
		}
	}
	noModel = len(r.Models) > 0 && len(req.Models) == 0
	if err := req.Validate(t); err != nil { // a backstop: checkRequest should have said it
		return req, false, fmt.Errorf("%w: request: %w", ErrInvalid, err)
	}
	return req, noModel, nil
}

// checkRequest checks the request's numbers and level combinations, in the
// terms of the format.
func checkRequest(t *topology.Tree, r *Request, required, preferred, slice topology.Level) error {
	switch {
	case r.Pods < 1:
		return fmt.Errorf("pods %d, want ≥ 1", r.Pods)
	case r.GPUs < 0 || r.GPUs > topology.MaxHostGPUs:
		return fmt.Errorf("gpus %d, want 0…%d", r.GPUs, topology.MaxHostGPUs)
	case r.Milli < 0 || r.Milli >= topology.FullGPU:
		return fmt.Errorf("milli %d, want 0 (whole GPUs) or 1…999 (a fraction of one GPU)", r.Milli)
	case r.Milli > 0 && r.GPUs != 1:
		return fmt.Errorf("a fractional request (milli %d) has gpus 1, not %d", r.Milli, r.GPUs)
	case r.CPUMilli < 0 || r.MemoryMiB < 0:
		return fmt.Errorf("negative cpuMilli or memoryMiB")
	case r.SliceSize < 0:
		return fmt.Errorf("sliceSize %d, want ≥ 0", r.SliceSize)
	case (r.SliceSize > 0) != (slice != topology.NoLevel):
		return fmt.Errorf("sliceSize and sliceLevel come both or neither (sliceSize %d, sliceLevel %q)", r.SliceSize, r.SliceLevel)
	case r.SliceSize > 0 && r.Pods%r.SliceSize != 0:
		return fmt.Errorf("sliceSize %d does not divide pods %d", r.SliceSize, r.Pods)
	case r.SliceSize > 0 && required != topology.NoLevel && slice < required:
		return fmt.Errorf("sliceLevel %s is above requiredLevel %s", t.LevelName(slice), t.LevelName(required))
	case preferred != topology.NoLevel && required != topology.NoLevel && preferred <= required:
		return fmt.Errorf("preferredLevel %s is not below requiredLevel %s", t.LevelName(preferred), t.LevelName(required))
	}
	return nil
}
