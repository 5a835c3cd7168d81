package worker

import "syscall"

// workerProcAttr: Windows has no process groups to put a worker in; a
// break or Close kills the worker process only.
func workerProcAttr() *syscall.SysProcAttr { return nil }

// killGroup does nothing: there is no group (proc.kill kills the worker).
func killGroup(int) {}
