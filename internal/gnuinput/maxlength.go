package gnuinput

// MaxLineLength returns the longest command line GNU parallel finds the
// system runs, before the margins DefaultMaxChars takes off: what GNU
// parallel 20221122's --max-line-length-allowed prints (130329 on Linux).
func MaxLineLength() int {
	const echo = "/usr/bin/echo" // as DefaultMaxChars
	return probeMaxLength(func(n int) bool { return n-1-len(echo) < maxArgStrlen })
}
