package pdeath

import (
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
