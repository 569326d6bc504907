package topology

import "errors"

// Sentinels wrapped by every error of this package; match them with errors.Is.
var (
	// ErrInvalid: the input is malformed (a builder's input, an operation
	// naming a host, GPU or level that does not exist, a pod of impossible shape).
	ErrInvalid = errors.New("topology: invalid")
	// ErrStale: a precondition of a Delta no longer holds (GPUs, milli, CPU or
	// memory not free, a guarded host changed, a job absent or already present).
	ErrStale = errors.New("topology: stale")
	// ErrCorrupt: a snapshot cannot be decoded.
	ErrCorrupt = errors.New("topology: corrupt snapshot")
)
