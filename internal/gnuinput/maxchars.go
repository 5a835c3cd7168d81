package gnuinput

// maxArgStrlen is Linux's MAX_ARG_STRLEN: the most bytes one argument (its
// NUL included) may take, 32 pages of 4 KiB whatever the stack limit.
const maxArgStrlen = 32 * 4096

// DefaultMaxChars returns GNU parallel's default for -s: the length of a
// command line it probes the system for, less 3000 bytes it keeps for its
// wrapping, halved for its hex quoting; 63664 on Linux.
//
// GNU parallel probes by running `echo ccc...c` with one argument of
// growing length (324, then times 16, then a binary search that stops
// within 1%), through perl, which execs it without a shell. What fails
// first is Linux's limit on one argument, MAX_ARG_STRLEN, so the probe is
// reproduced here, step by step, against that limit instead of by running
// some twenty processes: the result is the number GNU parallel 20221122
// finds and caches (130329 before the margin).
func DefaultMaxChars() int {
	const echo = "/usr/bin/echo" // which("echo"); its length moves nothing
	return (probeMaxLength(func(n int) bool { return n-1-len(echo) < maxArgStrlen }) - 3000) / 2
}

// probeMaxLength is GNU parallel's find_max and binary_find_max over
// accept, which says whether a command line of n bytes runs.
func probeMaxLength(accept func(n int) bool) int {
	const upper = 100_000_000
	n := 324
	for {
		if n > upper {
			return n
		}
		n *= 16
		if !accept(n) {
			break
		}
	}
	lo, hi := n/16, n
	for lo != hi && lo != hi-1 && float64(lo)/float64(hi) <= 0.99 {
		mid := (hi-lo)/2 + lo
		if accept(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
