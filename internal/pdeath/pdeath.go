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
//
// A forking thread can also be set up so that what it forks starts
// differently ([Thread]): at a niceness of its own (--nice), or in a cgroup
// v1 memory cgroup of its own (the jobs' cgroup of package jobcgroup): on
// Linux a new process inherits both from the thread that forks it, not
// from the whole process.
//
// It imports the standard library only.
package pdeath

import (
	"runtime"
	"sync"
)

// Thread says how a forking thread is set up; the zero Thread is the
// plain forking thread of [Do]. Each distinct Thread gets a thread of its
// own, made by the first call that asks for it.
type Thread struct {
	// Nice, when NiceSet, is the thread's niceness (setpriority of the
	// thread itself), which what it forks starts at (Linux only).
	Nice    int
	NiceSet bool
	// Tasks, when set, is a cgroup v1 "tasks" file that the thread writes
	// its own thread ID to, so that what it forks starts in that cgroup
	// (Linux only). The process's other threads stay where they are, and
	// its memory stays charged to its own memory cgroup: the kernel
	// charges a process's pages to the cgroup of its main thread.
	Tasks string
}

// threads are the forking threads, one per Thread asked for: a thread is
// process-wide, so this state is too. Each lives until Retire, or as long
// as ration, so that the parent-death signal of what it forks keeps
// meaning ration's death. mu is held for reading while a forker is used,
// and for writing while one is added or retired, so that Retire never
// closes a forker's channel under a DoOn.
var threads struct {
	mu sync.RWMutex
	m  map[Thread]*forker
}

type forker struct {
	ch  chan func()
	err error // setting the thread up failed: it runs nothing
}

// Do runs f on the plain forking thread and returns when f returned. f
// must not call Do or DoOn. Calls from several goroutines run one at a
// time (fork is serialized by the runtime's ForkLock anyway).
func Do(f func()) { _ = DoOn(Thread{}, f) }

// DoOn runs f on the forking thread set up as t and returns when f
// returned. The error is setting the thread up (EACCES: lowering the
// niceness needs CAP_SYS_NICE; a Tasks file that cannot be written;
// errors.ErrUnsupported outside Linux); f does not run then. f must not
// call Do, DoOn or Retire.
func DoOn(t Thread, f func()) error {
	threads.mu.RLock()
	fk := threads.m[t]
	for fk == nil {
		threads.mu.RUnlock()
		if err := addForker(t); err != nil {
			return err
		}
		threads.mu.RLock()
		fk = threads.m[t] // nil again if retired meanwhile
	}
	defer threads.mu.RUnlock()
	done := make(chan struct{})
	fk.ch <- func() {
		defer close(done)
		f()
	}
	<-done
	return nil
}

// addForker starts the forking thread of t unless there is one, and
// returns the error of its setup.
func addForker(t Thread) error {
	threads.mu.Lock()
	defer threads.mu.Unlock()
	if threads.m[t] != nil {
		return nil
	}
	fk := &forker{ch: make(chan func())}
	ready := make(chan struct{})
	go loop(t, fk, ready, nil)
	<-ready
	if fk.err != nil {
		return fk.err
	}
	if threads.m == nil {
		threads.m = map[Thread]*forker{}
	}
	threads.m[t] = fk
	return nil
}

// Retire ends every forking thread whose Thread.Tasks is tasks, after
// moving it into the cgroup whose tasks file is back, so that the cgroup
// of tasks holds no thread of this process and can be removed. Call it
// once nothing those threads forked runs any more: ending a thread sends
// the parent-death signal to the processes it forked. A later DoOn with
// such a Thread makes a new thread.
func Retire(tasks, back string) error {
	threads.mu.Lock()
	defer threads.mu.Unlock()
	var first error
	for t, fk := range threads.m {
		if t.Tasks != tasks || tasks == "" {
			continue
		}
		done := make(chan error)
		fk.ch <- func() { done <- joinCgroup(back) }
		if err := <-done; err != nil && first == nil {
			first = err
		}
		close(fk.ch)
		delete(threads.m, t)
	}
	return first
}

// loop is a forking goroutine: locked to its thread, which it sets up as t
// says, and ending only at Retire, so the runtime never ends that thread
// before. A thread whose setup failed is ended at once: its state is
// unknown (runtime.Goexit of a locked goroutine ends its thread).
//
// The thread is never the process's main thread: the process's memory is
// charged to the memory cgroup of that thread (its mm's owner), so it
// must not join the jobs' cgroup. When loop finds itself on it, it starts
// its successor while it holds the main thread, so that the successor
// gets another, and lets the main thread go once the successor has locked
// its own (closing locked, nil for the first loop).
func loop(t Thread, fk *forker, ready, locked chan<- struct{}) {
	runtime.LockOSThread()
	if mainThread() {
		mine := make(chan struct{})
		go loop(t, fk, ready, mine)
		<-mine
		runtime.UnlockOSThread()
		return
	}
	if locked != nil {
		close(locked)
	}
	fk.err = setUp(t)
	close(ready)
	if fk.err != nil {
		runtime.Goexit()
	}
	for f := range fk.ch {
		f()
	}
}
