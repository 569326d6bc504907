package cpu

// LineSize is the cache line size PrefetchRange steps by: 64 bytes on the
// processors Blink runs on (x86-64, and the arm64 server cores; Apple's
// 128-byte lines get every other line hinted twice, which is harmless).
const LineSize = 64
