// Package cpu asks the processor to bring memory into its caches ahead of
// use (Prefetch): a hint that never faults and never waits, so the cache
// misses of records a loop will read soon overlap with its work instead of
// stalling it one after the other. On architectures without an assembly
// version it does nothing.
package cpu
