// Package pdeath runs the code that starts ration's jobs and workers on
// one OS thread that lives as long as ration, so that their parent-death
// signal means the death of ration.
//
// On Linux, ration starts every job and worker with PR_SET_PDEATHSIG
// (SysProcAttr.Pdeathsig = SIGKILL): when ration dies, however it dies
// (SIGKILL, the OOM killer, a crash), the kernel kills them, so a job that
// --resume will run again is not still running. The kernel sends that
// signal when the *thread* that forked the child exits, not the process,
// and the Go runtime ends a thread when a goroutine locked to it exits.
// Forking on a thread that some goroutine may later lock and leave would
// kill the jobs in the middle of the run. Do runs every fork on a thread
// of its own, locked by a goroutine that never returns.
//
// What PR_SET_PDEATHSIG cannot catch: the signal goes to the job's own
// process only; its children get no such signal (the kernel clears it on
// fork), and a job that leaves its process group (setsid, a daemon) is out
// of ration's reach while ration runs, too. See docs/reliability.md.
package pdeath

import (
	"runtime"
	"sync"
)

// thread is the one forking thread of the process: a thread is
// process-wide, so this state is too.
var thread struct {
	once sync.Once
	ch   chan func()
}

// Do runs f on the forking thread and returns when f returned. f must not
// call Do. Calls from several goroutines run one at a time (fork is
// serialized by the runtime's ForkLock anyway).
func Do(f func()) {
	thread.once.Do(func() {
		thread.ch = make(chan func())
		go loop(thread.ch)
	})
	done := make(chan struct{})
	thread.ch <- func() {
		defer close(done)
		f()
	}
	<-done
}

// loop is the forking goroutine: locked to its thread, never returning,
// so the runtime never ends that thread.
func loop(ch <-chan func()) {
	runtime.LockOSThread()
	for f := range ch {
		f()
	}
}
