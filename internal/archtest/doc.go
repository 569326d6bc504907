// Package archtest holds architecture tests for the module: rules about how
// packages may depend on each other and on the outside world, checked by
// parsing the source rather than by review.
//
// The import rule: the engine packages (every package of the module except
// those under bench/, cmd/, examples/ and internal/testkit/) are a pure
// function of their inputs, so they import no I/O, clock, concurrency or
// logging packages (os, net, time, sync, log, context, and their
// subpackages), and no module but the standard library, this module,
// github.com/bits-and-blooms/bitset and golang.org/x/exp. Tests are exempt.
//
// The package has no code of its own; `go test ./internal/archtest` runs the
// checks.
package archtest
