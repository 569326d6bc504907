//go:build !amd64 && !arm64

package cpu

import "unsafe"

// Prefetch does nothing on this architecture (prefetch.go).
func Prefetch(p unsafe.Pointer) {}

// PrefetchRange does nothing on this architecture but count the lines
// (prefetch.go).
func PrefetchRange(p unsafe.Pointer, n uintptr) (lines int) {
	if n == 0 {
		return 0
	}
	return int((uintptr(p)+n-1)/LineSize - uintptr(p)/LineSize + 1)
}
