package pdeath

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
)

// niced are the forking threads that run at a niceness of their own, one
// per niceness asked for: like the thread of Do, each lives as long as
// ration, so the parent-death signal of what it forks keeps meaning
// ration's death.
var niced struct {
	mu      sync.Mutex
	threads map[int]*nicedThread
}

type nicedThread struct {
	ch  chan func()
	err error // setting the thread's niceness failed: it runs nothing
}

// DoNice runs f on a forking thread whose niceness is n (setpriority of
// the thread itself), so that a child forked by f starts at niceness n:
// on Linux a new process inherits the niceness of the thread that forked
// it, not of the whole process. The thread is made by the first call for
// n and never ends. The error is setting the niceness (EACCES: lowering
// it needs CAP_SYS_NICE); f does not run then. f must not call Do or
// DoNice.
func DoNice(n int, f func()) error {
	niced.mu.Lock()
	t := niced.threads[n]
	if t == nil {
		t = &nicedThread{ch: make(chan func())}
		ready := make(chan struct{})
		go t.loop(n, ready)
		<-ready
		if niced.threads == nil {
			niced.threads = map[int]*nicedThread{}
		}
		niced.threads[n] = t
	}
	niced.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	done := make(chan struct{})
	t.ch <- func() {
		defer close(done)
		f()
	}
	<-done
	return nil
}

// loop locks its goroutine to a thread for good, sets that thread's
// niceness, and runs what DoNice sends it.
func (t *nicedThread) loop(n int, ready chan<- struct{}) {
	runtime.LockOSThread()
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), n); err != nil {
		t.err = fmt.Errorf("setting niceness %d: %w", n, err)
	}
	close(ready)
	if t.err != nil {
		// The thread's niceness is unknown: the runtime may end it
		// (runtime.Goexit of a locked goroutine ends its thread).
		runtime.Goexit()
	}
	for f := range t.ch {
		f()
	}
}
