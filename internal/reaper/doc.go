// Package reaper reaps orphaned processes when ration runs as PID 1 (the
// entrypoint of a container) or as a child subreaper, without stealing the
// exit status of the children ration starts and waits for itself.
//
// A job that backgrounds a process and exits leaves that process orphaned.
// The kernel reparents orphans to the nearest subreaper ancestor, or to PID 1
// of the PID namespace. In a container ration is that PID 1, and an orphan it
// never waits for stays a zombie until the pod ends, holding a PID. A naive
// reaper (wait4(-1) in a loop) would also collect ration's own direct
// children before os/exec waits for them, so os/exec would report
// "wait: no child processes" instead of the job's exit status.
//
// The Reaper therefore peeks at exited children with waitid(WNOWAIT), which
// leaves them waitable, and collects only those it did not start itself.
// Children are started through [Reaper.Start] (or [Reaper.ForkExec], its
// syscall-level twin), which registers their PID while holding off the
// reaping loop, so a child that exits before it is registered cannot be
// mistaken for an orphan.
//
// Every child process of the program must be started with [Reaper.Start]
// or [Reaper.ForkExec] while the Reaper is active; a child started any other
// way may be reaped before its owner waits for it.
//
// Reaping is Linux-only (PR_SET_CHILD_SUBREAPER and waitid with WNOWAIT are
// what make it safe); on other systems the Reaper is always inactive and
// starts and waits like os/exec and syscall do. On Windows, which has no
// ForkExec and no wait4, it offers Start and Wait only.
//
// It imports the standard library and x/sys only.
package reaper
