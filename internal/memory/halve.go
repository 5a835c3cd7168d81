package memory

import "time"

// HalveAfterOOM is the concurrency after an OOM kill of jobs run cur at a
// time (rule 2 of OOM kills): half of cur, at least 1, and the OOM
// ceiling, the largest size not known to OOM, cur - 1 (0: none, when cur
// is 1). Growing back after successes stops below the ceiling, so that a
// run whose memory fits 2 jobs but not 4 settles at 2 instead of
// oscillating.
func HalveAfterOOM(cur int) (size, ceiling int) {
	if cur > 1 {
		ceiling = cur - 1
	}
	return max(1, cur/2), ceiling
}

// OOMHalves reports whether the OOM kill of one job halves the
// concurrency (HalveAfterOOM). Not when it ran alone: it does not fit at
// any concurrency, and halving would only slow the jobs that do and set
// a ceiling below a size that was never killed. Nor when its attempt
// started before the last halving: it ran at the concurrency that halving
// already answered, so jobs killed side by side halve once, not once
// each. A zero started or lastHalving is unknown: the kill halves.
func OOMHalves(alone bool, started, lastHalving time.Time) bool {
	if alone {
		return false
	}
	return started.IsZero() || lastHalving.IsZero() || !started.Before(lastHalving)
}
