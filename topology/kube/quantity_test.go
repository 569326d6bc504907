package kube

import (
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

func TestParseQuantity(t *testing.T) {
	cases := []struct{ in, want string }{
		{"64", "64"},
		{"63500m", "127/2"},
		{"512Gi", "549755813888"},
		{"1e3", "1000"},
		{"1E3", "1000"},
		{"1e-3", "1/1000"},
		{"1E", "1000000000000000000"},
		{"500M", "500000000"},
		{"0.5", "1/2"},
		{".5", "1/2"},
		{"1.", "1"},
		{"+2k", "2000"},
		{"-1", "-1"},
		{"1.5Ki", "1536"},
		{"100u", "1/10000"},
		{"3n", "3/1000000000"},
		{"1Ei", "1152921504606846976"},
		{"0", "0"},
		{"007", "7"},
		{"2.5e+2", "250"},
	}
	for _, c := range cases {
		q, err := ParseQuantity(c.in)
		if err != nil || q.RatString() != c.want {
			t.Errorf("ParseQuantity(%q) = %v, %v; want %s", c.in, q, err, c.want)
		}
	}
	for _, bad := range []string{"", " 1", "1 ", "Gi", ".", "-", "1x", "1KI", "1ki", "1e", "1e+", "1.2.3", "1e1.5",
		"1Gi1", "e3", "1e9999", "1e1234567890", "0x10", "1_000", "１"} {
		if q, err := ParseQuantity(bad); err == nil {
			t.Errorf("ParseQuantity(%q) = %v, want an error", bad, q)
		}
	}
}

// Random quantities in every notation against integer arithmetic.
func TestQuantityOracle(t *testing.T) {
	seed := uint64(7)
	if s := os.Getenv("BLINK_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set BLINK_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	type suf struct {
		s        string
		mul, div int64
	}
	sufs := []suf{{"", 1, 1}, {"m", 1, 1000}, {"k", 1000, 1}, {"M", 1_000_000, 1}, {"G", 1_000_000_000, 1},
		{"Ki", 1 << 10, 1}, {"Mi", 1 << 20, 1}, {"Gi", 1 << 30, 1}, {"Ti", 1 << 40, 1}, {"e2", 100, 1}, {"e-2", 1, 100}, {"u", 1, 1_000_000}}
	for range 5000 {
		n := rng.Int64N(1 << 20)
		frac := rng.IntN(3) // digits after the point
		sf := sufs[rng.IntN(len(sufs))]
		s := strconv.FormatInt(n, 10)
		div := int64(1)
		if frac > 0 {
			for len(s) <= frac {
				s = "0" + s
			}
			s = s[:len(s)-frac] + "." + s[len(s)-frac:]
			for range frac {
				div *= 10
			}
		}
		want := big.NewRat(n*sf.mul, div*sf.div)
		got, err := ParseQuantity(s + sf.s)
		if err != nil || got.Cmp(want) != 0 {
			t.Fatalf("ParseQuantity(%q) = %v, %v; want %v", s+sf.s, got, err, want)
		}
	}
}

func TestFloorScaled(t *testing.T) {
	q, _ := ParseQuantity("63500m")
	if v, err := floorScaled(q, 1000, 1, 1<<31-1); v != 63500 || err != nil {
		t.Errorf("63500m = %d milli, %v", v, err)
	}
	q, _ = ParseQuantity("1.5Mi")
	if v, err := floorScaled(q, 1, 1<<20, 1<<31-1); v != 1 || err != nil {
		t.Errorf("1.5Mi = %d MiB, %v", v, err)
	}
	q, _ = ParseQuantity("3Pi")
	if _, err := floorScaled(q, 1, 1<<20, 1<<31-1); err == nil {
		t.Error("3Pi fits in 2^31-1 MiB")
	}
	q, _ = ParseQuantity("-1")
	if _, err := floorScaled(q, 1, 1, 10); err == nil {
		t.Error("negative accepted")
	}
}
