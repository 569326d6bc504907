package cpu

// LineSize is the cache line size PrefetchRange steps by: 64 bytes on x86-64
// and the arm64 server cores (on cores with 128-byte lines each line is
// hinted twice, which is harmless).
const LineSize = 64
