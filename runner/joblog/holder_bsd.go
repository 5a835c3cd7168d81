//go:build darwin || dragonfly || freebsd || netbsd || openbsd || illumos

package joblog

import "os"

// holder cannot name the process holding a flock on these systems: they
// have no /proc/locks, and F_GETLK does not see flocks.
func holder(*os.File) string { return "held by another process" }
