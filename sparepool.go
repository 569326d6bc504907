package blink

import (
	"fmt"
	"math"
)

// maxPoolHosts bounds SparePool's domain: the most hosts a topology holds
// (BuildShape's limit). The sum it makes runs from 0 hosts failed, so a
// larger domain would cost as many steps as it has hosts.
const maxPoolHosts = 1 << 28

// SparePool sizes a spare pool: for a domain of hosts hosts, each failing
// independently with probability failProb over one repair window, it
// returns the fewest spares N such that the domain absorbs its failures —
// at most N hosts fail in the window — with probability at least target:
// the smallest N with P(X ≤ N) ≥ target for X ~ Binomial(hosts, failProb).
// That replaces a blanket reserve (a share of the fleet held idle) by a
// computed one per domain: with 18-host NVL72 racks and a 1% failure
// probability, N = 2 absorbs a rack's failures with probability 0.9993.
//
// hosts in 0…2^28 (the most hosts a topology holds), failProb and target in
// [0, 1]; anything else is an error wrapping ErrInvalid. The answer is at
// most hosts (target 1 with failProb > 0 needs every host). O(N).
func SparePool(hosts int, failProb, target float64) (int, error) {
	switch {
	case hosts < 0 || hosts > maxPoolHosts:
		return 0, fmt.Errorf("%w: %d hosts, want 0…%d", ErrInvalid, hosts, maxPoolHosts)
	case !(failProb >= 0 && failProb <= 1):
		return 0, fmt.Errorf("%w: failure probability %v, want 0…1", ErrInvalid, failProb)
	case !(target >= 0 && target <= 1):
		return 0, fmt.Errorf("%w: target probability %v, want 0…1", ErrInvalid, target)
	}
	if failProb == 0 {
		return 0, nil
	}
	if failProb == 1 {
		return hosts, nil
	}
	// pmf(k+1) = pmf(k) · (n-k)/(k+1) · p/(1-p), from pmf(0) = (1-p)^n, in
	// log space so large domains do not underflow.
	logq := math.Log1p(-failProb)
	logOdds := math.Log(failProb) - logq
	logPMF := float64(hosts) * logq
	cdf := 0.0
	for n := 0; n < hosts; n++ {
		cdf += math.Exp(logPMF)
		if cdf >= target {
			return n, nil
		}
		logPMF += math.Log(float64(hosts-n)) - math.Log(float64(n+1)) + logOdds
	}
	return hosts, nil
}

// AbsorbProbability is P(X ≤ spares) for X ~ Binomial(hosts, failProb): the
// probability that a domain of hosts hosts with spares spares absorbs the
// failures of one repair window. Arguments out of range (hosts as for
// SparePool) give NaN. O(spares).
func AbsorbProbability(hosts, spares int, failProb float64) float64 {
	if hosts < 0 || hosts > maxPoolHosts || spares < 0 || !(failProb >= 0 && failProb <= 1) {
		return math.NaN()
	}
	if spares >= hosts || failProb == 0 {
		return 1
	}
	if failProb == 1 {
		return 0
	}
	logq := math.Log1p(-failProb)
	logOdds := math.Log(failProb) - logq
	logPMF := float64(hosts) * logq
	cdf := 0.0
	for n := 0; n <= spares; n++ {
		cdf += math.Exp(logPMF)
		logPMF += math.Log(float64(hosts-n)) - math.Log(float64(n+1)) + logOdds
	}
	return math.Min(cdf, 1)
}
