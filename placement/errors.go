package placement

import "errors"

var (
	// ErrInvalid: the request is malformed.
	ErrInvalid = errors.New("placement: invalid request")
	// ErrNoFit: the request is well formed but the cluster cannot serve it
	// now; Reason says why.
	ErrNoFit = errors.New("placement: no fit")
)
