package slurm

import (
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"gb200-[001-003,005]", "gb200-001 gb200-002 gb200-003 gb200-005"},
		{"n[8-10]", "n8 n9 n10"},
		{"n[08-10]", "n08 n09 n10"},
		{"n[1,3-4],m2,x", "n1 n3 n4 m2 x"},
		{"r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2"},
		{"a[1-2]-b[3-4]", "a1-b3 a1-b4 a2-b3 a2-b4"},
		{"[7-9]", "7 8 9"},
		{"x[1-2]-ib", "x1-ib x2-ib"},
		{"n1,n1", "n1 n1"},
		{"switch.1.[1-2]", "switch.1.1 switch.1.2"},
		{"n[0-0]", "n0"},
	}
	for _, c := range cases {
		got, err := ExpandHostlist(c.expr)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("ExpandHostlist(%q) = %q, %v; want %q", c.expr, got, err, c.want)
		}
	}
	for _, bad := range []string{"", " ", "n[", "n]", "n[1-2", "n[]", "n[a]", "n[2-1]", "n[1-]", "n[-1]",
		"n[[1]]", "a,,b", ",a", "a b", "n[1-2]]", "n[1234567890123456789]", "x=y", "n[0-99999999]"} {
		if got, err := ExpandHostlist(bad); err == nil {
			t.Errorf("ExpandHostlist(%q) = %q, want an error", bad, got)
		}
	}
}

func TestRangedString(t *testing.T) {
	cases := []struct{ names, want string }{
		{"b1 b2 b3 c", "b[1-3],c"},
		{"n8 n9 n10 n12", "n[8-10,12]"},
		{"n098 n099 n100 n101", "n[098-101]"},
		{"n1 n01", "n1,n01"},
		{"a1 b1 a2", "a1,b1,a2"},
		{"x", "x"},
		{"7 8 9", "[7-9]"},
		{"n3 n2 n1", "n[3,2,1]"},
		{"", ""},
	}
	for _, c := range cases {
		var names []string
		if c.names != "" {
			names = strings.Split(c.names, " ")
		}
		if got := RangedString(names); got != c.want {
			t.Errorf("RangedString(%q) = %q, want %q", c.names, got, c.want)
		}
	}
}

// RangedString and ExpandHostlist are inverses on random name lists: runs,
// gaps, zero padding of several widths, names without digits.
func TestRangedRoundTrip(t *testing.T) {
	seed := uint64(1)
	if s := os.Getenv("BLINK_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set BLINK_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	prefixes := []string{"n", "gpu-", "r1n", "", "a.b", "x-"}
	for range 2000 {
		var names []string
		for range 1 + rng.IntN(20) {
			p := prefixes[rng.IntN(len(prefixes))]
			switch rng.IntN(4) {
			case 0:
				if p == "" {
					p = "z"
				}
				names = append(names, p)
			default:
				width := rng.IntN(4)
				names = append(names, p+string(appendPadded(nil, uint64(rng.IntN(120)), width)))
			}
		}
		expr := RangedString(names)
		back, err := ExpandHostlist(expr)
		if err != nil || !slices.Equal(back, names) {
			t.Fatalf("names %q → %q → %q, %v", names, expr, back, err)
		}
	}
}
