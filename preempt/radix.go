package preempt

import "math/bits"

// radixKey is a sort key with a payload (a candidate index).
type radixKey struct {
	k uint64
	c int32
}

// radixSort sorts keys by k ascending (stable), whose values are below
// 1<<nbits, with buf as scratch; it returns the sorted slice (keys or buf)
// and the other one. Least significant digit first, 11 bits a pass.
func radixSort(keys, buf []radixKey, nbits int) (sorted, other []radixKey) {
	buf = resize(buf, len(keys))
	const digit = 11
	if len(keys) == 0 {
		return keys, buf
	}
	var count [1 << digit]int
	for shift := 0; shift < nbits; shift += digit {
		clear(count[:])
		for i := range keys {
			count[(keys[i].k>>uint(shift))&(1<<digit-1)]++
		}
		if count[(keys[0].k>>uint(shift))&(1<<digit-1)] == len(keys) {
			continue // one digit value: the pass changes nothing
		}
		sum := 0
		for d, n := range count {
			count[d] = sum
			sum += n
		}
		for i := range keys {
			d := (keys[i].k >> uint(shift)) & (1<<digit - 1)
			buf[count[d]] = keys[i]
			count[d]++
		}
		keys, buf = buf, keys
	}
	return keys, buf
}

// sortInt64s sorts non-negative values ascending, by radix when there are
// many (buf is scratch; the result is in vals). Negative values fall back to
// a comparison sort.
func (p *Planner) sortInt64s(vals []int64) {
	if len(vals) < 256 {
		slicesSortInt64(vals)
		return
	}
	hi := int64(0)
	for _, v := range vals {
		if v < 0 {
			slicesSortInt64(vals)
			return
		}
		hi = max(hi, v)
	}
	keys := resize(p.radixA, len(vals))
	for i, v := range vals {
		keys[i] = radixKey{k: uint64(v)}
	}
	sorted, other := radixSort(keys, p.radixB, bits.Len64(uint64(hi)))
	for i := range sorted {
		vals[i] = int64(sorted[i].k)
	}
	p.radixA, p.radixB = sorted, other
}
