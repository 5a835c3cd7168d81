//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package logs

// isTerminal is false where ration cannot tell (plan9, solaris, wasm): the human
// format and the progress bar then need asking for.
func isTerminal(uintptr) bool { return false }
