//go:build unix && !linux

package runner

import "syscall"

// jobProcAttr puts a job in its own process group, so that stopping it
// stops what it started. There is no parent-death signal outside Linux:
// the jobs of a ration that was killed itself run on.
func jobProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
