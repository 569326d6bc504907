// Package bench is Blink's measurement kit: synthetic clusters at the sizes
// every benchmark uses, a seeded direct fill that loads them like a cluster a
// topology-aware scheduler runs, and the floor F every figure is divided by.
// It is imported by cmd/ and examples/ and holds every named benchmark
// (go test -bench . ./bench); engine packages never import it.
//
// # Clusters
//
// Cluster(shape, gpus) builds (once per process, then shares) one of two
// shapes at four nominal sizes:
//
//	shape  levels         host        16k        131k        1M          8M
//	nvl72  block/su/rack  4 GPUs      2 blocks   14 blocks   109 blocks  868 blocks
//	hgx    pod/su         8 GPUs      4 pods     32 pods     256 pods    2,048 pods
//
// NVL72 (topology.NVL72) has 18 hosts per rack, 8 racks per SU and 16 SUs per
// block: a block is 9,216 GPUs. HGX (topology.HGX) has 32 hosts per SU and 16
// SUs per pod: a pod is 4,096 GPUs. Size names are nominal; clusters round to
// whole blocks or pods (1M is 1,004,544 NVL72 GPUs or 1,048,576 HGX GPUs).
//
// # Fill
//
// Fill(s, load, seed) loads an empty State directly, in O(GPUs), through
// State.Apply with one AddJob Delta per job — never by running a placement
// algorithm. Loaded(shape, gpus, load, seed) caches filled States per key. The
// model is described on Fill.
//
// # The floor F
//
// BenchmarkFloor/gpus=N times bitset.Count over 2^14, 2^17, 2^20 or 2^23 bits
// (16k, 131k, 1M, 8M): one pass over a free-mask of that size, the least any
// whole-cluster question can cost. Every other benchmark calls
// ReportRatio(b, gpus) after its loop and reports ns/op ÷ F as the "xF"
// metric, with F measured in the same process (FloorNs), so the ratio holds
// across machines where absolute times do not.
//
// # Running
//
//	go test -run '^$' -bench . ./bench                      # sizes up to 1M
//	BLINK_BENCH_FULL=1 go test -run '^$' -bench . ./bench   # and 8M
//
// Sub-benchmarks are named key=value (gpus=1M/shape=nvl72/load=50); fixtures
// are built before the timer starts and cached for the rest of the run.
package bench
