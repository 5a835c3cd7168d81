//go:build unix

package runner

import (
	"errors"
	"syscall"
)

// groupGone reports whether no process of the process group pgid (a job's:
// each job leads its own) is left. pgid 0 (never started) counts as gone.
func groupGone(pgid int) bool {
	if pgid <= 0 {
		return true
	}
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}
