package topology

import (
	"fmt"
	"strconv"
	"strings"
)

// Shape describes a regular cluster: every domain of a level has the same
// number of children.
type Shape struct {
	// Levels names the domain levels root-first, e.g. {"block", "su", "rack"}.
	Levels []string
	// FanOut has one entry per level plus one for hosts: FanOut[0] domains of
	// Levels[0] under the root, FanOut[i] domains of Levels[i] under each domain
	// of Levels[i-1], and FanOut[len(Levels)] hosts under each last-level domain.
	FanOut []int
	// GPUsPerHost is 0…64.
	GPUsPerHost int
	// Model names the GPU model of every host ("" for none).
	Model string
	// CPUMilli and MemoryMiB per host; 0 means Unlimited.
	CPUMilli, MemoryMiB int64
}

// NVL72 returns the GB200 NVL72 shape: 4 GPUs per host, 18 hosts per rack,
// 8 racks per scalable unit, 16 SUs per block, and blocks blocks (109 blocks
// ≈ 1M GPUs).
func NVL72(blocks int) Shape {
	return Shape{
		Levels:      []string{"block", "su", "rack"},
		FanOut:      []int{blocks, 16, 8, 18},
		GPUsPerHost: 4, Model: "GB200", CPUMilli: 144000, MemoryMiB: 884736,
	}
}

// HGX returns the HGX H100 shape: 8 GPUs per host, 32 hosts per scalable unit,
// 16 SUs per pod, and pods pods (256 pods ≈ 1M GPUs).
func HGX(pods int) Shape {
	return Shape{
		Levels:      []string{"pod", "su"},
		FanOut:      []int{pods, 16, 32},
		GPUsPerHost: 8, Model: "H100", CPUMilli: 224000, MemoryMiB: 2097152,
	}
}

// GPUs is the total GPU count of the shape (0 if it overflows).
func (sh Shape) GPUs() int64 {
	n := int64(sh.GPUsPerHost)
	for _, f := range sh.FanOut {
		if f > 0 && n > (1<<40)/int64(f) { // n·f > 2^40, tested without overflowing
			return 0
		}
		n *= int64(f)
	}
	return n
}

// BuildShape builds the Tree of a regular cluster. Domains are labelled by
// level name and index within their parent ("rack17"), hosts "host5"; a
// host's name is its path ("block3/su0/rack17/host5"). O(hosts).
func BuildShape(sh Shape) (*Tree, error) {
	if err := sh.validate(); err != nil {
		return nil, err
	}
	s := newSkeleton(append([]string(nil), sh.Levels...))
	count := 1
	for l, name := range sh.Levels {
		f := sh.FanOut[l]
		labels := make([]int32, f)
		for i := range labels {
			labels[i] = s.label(name + strconv.Itoa(i))
		}
		count *= f
		s.domParent[l] = make([]int32, count)
		s.domLabel[l] = make([]int32, count)
		for i := range count {
			s.domParent[l][i] = int32(i / f)
			s.domLabel[l][i] = labels[i%f]
		}
	}
	f := sh.FanOut[len(sh.Levels)]
	hostLabels := make([]int32, f)
	for i := range hostLabels {
		hostLabels[i] = s.label("host" + strconv.Itoa(i))
	}
	H := count * f
	s.hostParent = make([]int32, H)
	s.hostLabel = make([]int32, H)
	s.hostGPUs = make([]int32, H)
	s.hostModel = make([]uint16, H)
	s.hostCPU = make([]int32, H)
	s.hostMem = make([]int32, H)
	model := s.model(sh.Model)
	cpu, mem := orUnlimited(sh.CPUMilli), orUnlimited(sh.MemoryMiB)
	for h := range H {
		s.hostParent[h] = int32(h / f)
		s.hostLabel[h] = hostLabels[h%f]
		s.hostGPUs[h] = int32(sh.GPUsPerHost)
		s.hostModel[h] = model
		s.hostCPU[h], s.hostMem[h] = cpu, mem
	}
	return s.finalize(nil)
}

func orUnlimited(v int64) int32 {
	if v == 0 {
		return Unlimited
	}
	return int32(v)
}

func (sh Shape) validate() error {
	if err := validateLevels(sh.Levels); err != nil {
		return err
	}
	for i, l := range sh.Levels {
		if strings.Contains(l, "/") { // labels derive from level names; host names are "/"-joined paths
			return fmt.Errorf("%w: level %d: name %q contains \"/\"", ErrInvalid, i, l)
		}
	}
	if len(sh.FanOut) != len(sh.Levels)+1 {
		return fmt.Errorf("%w: shape has %d levels and %d fan-outs, want %d (one per level, then hosts)",
			ErrInvalid, len(sh.Levels), len(sh.FanOut), len(sh.Levels)+1)
	}
	for i, f := range sh.FanOut {
		if f < 1 {
			what := "hosts per domain"
			if i < len(sh.Levels) {
				what = "level " + sh.Levels[i]
			}
			return fmt.Errorf("%w: fan-out of %s is %d, want ≥ 1", ErrInvalid, what, f)
		}
	}
	hosts := int64(1)
	for _, f := range sh.FanOut {
		hosts *= min(int64(f), 1<<29) // hosts ≤ 2^28 here: no overflow
		if hosts > 1<<28 {
			return fmt.Errorf("%w: shape has more than %d hosts", ErrInvalid, 1<<28)
		}
	}
	if g := hosts * int64(sh.GPUsPerHost); g > 1<<31-1 {
		return fmt.Errorf("%w: shape has %d GPUs, more than %d", ErrInvalid, g, 1<<31-1)
	}
	return validateHost("shape host", sh.GPUsPerHost, sh.CPUMilli, sh.MemoryMiB)
}
