package kube

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
)

// maxExponent bounds a quantity's decimal exponent: far beyond any real
// resource, small enough that "1e999999999" is an error, not a huge number.
const maxExponent = 1000

// maxDigits bounds a quantity's digits, for the same reason.
const maxDigits = 100

// ParseQuantity parses a Kubernetes resource quantity exactly, without
// rounding: a signed decimal number ("64", "0.5", ".5", "1.") followed by an
// optional suffix — binary (Ki Mi Gi Ti Pi Ei), decimal (n u m k M G T P E)
// or a decimal exponent (e3, E-2). So "63500m" is 127/2, "512Gi" is 2^39 and
// "1e3" is 1000. No space is allowed.
func ParseQuantity(s string) (*big.Rat, error) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart, frac := s[intStart:i], ""
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		frac = s[fracStart:i]
	}
	if intPart == "" && frac == "" {
		return nil, fmt.Errorf("quantity %q: no number", s)
	}
	digits := intPart + frac
	if len(digits) > maxDigits {
		return nil, fmt.Errorf("quantity %q: more than %d digits", s, maxDigits)
	}
	exp10, exp2, err := suffixScale(s[i:])
	if err != nil {
		return nil, fmt.Errorf("quantity %q: %w", s, err)
	}
	exp10 -= len(frac)
	m, _ := new(big.Int).SetString(digits, 10) // digits only: cannot fail
	if neg {
		m.Neg(m)
	}
	r := new(big.Rat).SetInt(m)
	if exp10 != 0 {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp10))), nil)
		if exp10 > 0 {
			r.Mul(r, new(big.Rat).SetInt(p))
		} else {
			r.Quo(r, new(big.Rat).SetInt(p))
		}
	}
	if exp2 > 0 {
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(exp2))))
	}
	return r, nil
}

// suffixScale returns the power of ten and of two a suffix multiplies by.
func suffixScale(suf string) (exp10, exp2 int, err error) {
	switch suf {
	case "":
		return 0, 0, nil
	case "n":
		return -9, 0, nil
	case "u":
		return -6, 0, nil
	case "m":
		return -3, 0, nil
	case "k":
		return 3, 0, nil
	case "M":
		return 6, 0, nil
	case "G":
		return 9, 0, nil
	case "T":
		return 12, 0, nil
	case "P":
		return 15, 0, nil
	case "E":
		return 18, 0, nil
	case "Ki":
		return 0, 10, nil
	case "Mi":
		return 0, 20, nil
	case "Gi":
		return 0, 30, nil
	case "Ti":
		return 0, 40, nil
	case "Pi":
		return 0, 50, nil
	case "Ei":
		return 0, 60, nil
	}
	if suf[0] == 'e' || suf[0] == 'E' {
		e := suf[1:]
		if e != "" && (e[0] == '+' || e[0] == '-') {
			e = e[1:]
		}
		if e == "" || len(e) > 9 || !allDigits(e) {
			return 0, 0, fmt.Errorf("bad exponent %q", suf)
		}
		v, _ := strconv.Atoi(suf[1:])
		if abs(v) > maxExponent {
			return 0, 0, fmt.Errorf("exponent %d out of range", v)
		}
		return v, 0, nil
	}
	return 0, 0, fmt.Errorf("unknown suffix %q", suf)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

var errRange = errors.New("out of range")

// floorScaled returns ⌊q·num/den⌋ if it lies in 0…limit.
func floorScaled(q *big.Rat, num, den int64, limit int64) (int64, error) {
	if q.Sign() < 0 {
		return 0, errors.New("negative")
	}
	v := new(big.Rat).Mul(q, big.NewRat(num, den))
	f := new(big.Int).Quo(v.Num(), v.Denom()) // truncation is floor for v ≥ 0
	if !f.IsInt64() || f.Int64() > limit {
		return 0, errRange
	}
	return f.Int64(), nil
}
