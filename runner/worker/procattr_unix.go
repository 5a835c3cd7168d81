//go:build unix && !linux

package worker

import "syscall"

// workerProcAttr puts a worker in its own process group, so that a break
// or Close kills the worker and everything it started. (There is no
// parent-death signal outside Linux: a worker of a ration that was killed
// itself sees its stdin close instead.)
func workerProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
