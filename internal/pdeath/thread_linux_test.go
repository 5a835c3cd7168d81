package pdeath

import (
	"sync"
	"syscall"
	"testing"
)

// No forking thread is the main thread, whose cgroup decides where the
// process's own memory is charged: twenty new threads, made while the
// main thread is idle (this test's goroutine is not on it).
func TestNeverMainThread(t *testing.T) {
	for n := range 20 {
		var tid int
		if err := DoOn(Thread{Nice: n, NiceSet: true}, func() { tid = syscall.Gettid() }); err != nil {
			t.Fatal(err)
		}
		if tid == syscall.Getpid() {
			t.Fatalf("the forking thread of niceness %d is the main thread", n)
		}
	}
}

// TestRetireBesideDoOn: Retire while other goroutines fork on the same
// thread never closes the thread's channel under them (a send on a closed
// channel would panic), and a DoOn after Retire gets a new thread.
func TestRetireBesideDoOn(t *testing.T) {
	dir := t.TempDir()
	tasks := dir + "/tasks" // a plain file stands for the cgroup's: any TID written is accepted
	back := dir + "/back"
	th := Thread{Tasks: tasks}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				if err := DoOn(th, func() {}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	retired := make(chan struct{})
	go func() {
		defer close(retired)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := Retire(tasks, back); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-retired
	if err := Retire(tasks, back); err != nil {
		t.Fatal(err)
	}
}
