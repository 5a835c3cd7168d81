package pdeath

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// setUp sets up the calling thread, locked to its goroutine, as t says.
func setUp(t Thread) error {
	if t.NiceSet {
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), t.Nice); err != nil {
			return fmt.Errorf("setting niceness %d: %w", t.Nice, err)
		}
	}
	if t.Tasks != "" {
		return joinCgroup(t.Tasks)
	}
	return nil
}

// joinCgroup moves the calling thread (only it) into the cgroup v1 whose
// tasks file is tasks.
func joinCgroup(tasks string) error {
	if err := os.WriteFile(tasks, []byte(strconv.Itoa(syscall.Gettid())), 0o644); err != nil {
		return fmt.Errorf("moving the forking thread into a cgroup: %w", err)
	}
	return nil
}

// mainThread reports whether the calling thread is the process's main
// thread (its thread ID is the process ID).
func mainThread() bool { return syscall.Gettid() == syscall.Getpid() }
