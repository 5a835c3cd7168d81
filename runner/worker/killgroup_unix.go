//go:build unix

package worker

import "syscall"

// killGroup kills the process group of the worker pid.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
