package preempt

import "errors"

var (
	// ErrInvalid: the request is malformed (the error also wraps
	// placement.ErrInvalid and its detail), or its job is already running.
	ErrInvalid = errors.New("preempt: invalid request")
	// ErrNoVictims: no victim set makes the request fit; Reason says why.
	ErrNoVictims = errors.New("preempt: no victim set")
	// ErrInternal: the Planner's capacity model and placement disagreed on a
	// plan (a bug); the State is not changed.
	ErrInternal = errors.New("preempt: internal error")
)
