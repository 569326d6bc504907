//go:build amd64 || arm64

package cpu

import "unsafe"

// Prefetch hints that the cache line holding p will be read soon. It does
// not dereference p in Go's sense: any address, even an invalid one, is
// safe, and the call changes nothing the program can observe but time.
//
//go:noescape
func Prefetch(p unsafe.Pointer)

// PrefetchRange hints that the n bytes from p will be read soon: Prefetch
// of every 64-byte line they touch, in one call. It returns the number of
// lines hinted. The range must not wrap around the address space.
//
//go:noescape
func PrefetchRange(p unsafe.Pointer, n uintptr) (lines int)
