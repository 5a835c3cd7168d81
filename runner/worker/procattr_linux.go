package worker

import "syscall"

// workerProcAttr puts a worker in its own process group, so that a break
// or Close kills the worker and everything it started, with
// PR_SET_PDEATHSIG, so that a worker does not outlive ration.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
