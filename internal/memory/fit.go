package memory

import "math"

// Headroom is the share of the memory limit that jobs of a known size
// (--mem-per-job, given or learnt) may use; the rest is left for ration
// itself, page cache and estimation error.
const Headroom = 0.9

// JobsFit is how many jobs of perJob bytes each fit in Headroom of limit
// bytes: share is Headroom x limit / perJob, n its floor (forgiving the
// float error of 0.9 x 3 and the like: 2.9999999999 is 3). n is 0 when
// not even one fits: a caller runs one anyway, and says so. A limit or
// perJob at or below 0 fits nothing known: 0, 0.
func JobsFit(limit, perJob int64) (n int, share float64) {
	if limit <= 0 || perJob <= 0 {
		return 0, 0
	}
	share = Headroom * float64(limit) / float64(perJob)
	return int(math.Floor(share + 1e-9)), share
}
