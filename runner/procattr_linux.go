package runner

import "syscall"

// jobProcAttr puts a job in its own process group, so that stopping it
// stops what it started, and gives it PR_SET_PDEATHSIG, so that the job
// dies with ration (package pdeath).
func jobProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
