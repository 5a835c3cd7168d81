package memory

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// guardTimer is what the guard sleeps on between two readings: a
// timerfd(2) that the Go runtime's network poller watches. The guard's
// goroutine parks on it, and the thread that runs the poller wakes alone
// when it fires. A Go timer (time.Sleep, time.Timer) or a sleep in a
// system call would also wake the runtime's monitor thread (sysmon, which
// every syscall.Syscall wakes from its deep sleep and which then polls
// every 20 us for a millisecond) and a spinning scheduler thread: four to
// six context switches for each reading, 80 to 160 us of CPU on a virtual
// machine, 2% of a CPU when the guard reads every 3 ms next to the limit.
// For the same reason the timer is armed, and the cgroup read (countFile),
// with raw system calls ([syscall.RawSyscall] does not enter the
// scheduler): each returns at once.
//
// A guardTimer is used by one goroutine at a time, but for Poke.
type guardTimer struct {
	poked atomic.Bool
	f     *os.File
	rc    syscall.RawConn
	wake  func(fd uintptr) bool // t.readable, made once: a method value allocates
	armed bool
	d     time.Duration
	errno syscall.Errno
	spec  unix.ItimerSpec
}

func newGuardTimer() (*guardTimer, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	t := &guardTimer{f: f, rc: rc}
	t.wake = t.readable
	return t, nil
}

// Sleep returns after d, or with an error once Close is called. It may
// return early, never late but for the scheduler.
func (t *guardTimer) Sleep(d time.Duration) error {
	t.armed, t.d, t.errno = false, d, 0
	// Read calls t.readable, and waits for the poller's word that the
	// timer fired each time it returns false.
	err := t.rc.Read(t.wake)
	if err == nil && t.errno != 0 {
		err = t.errno
	}
	if err != nil {
		return fmt.Errorf("timerfd: %w", err)
	}
	return nil
}

// readable arms the timer on its first call, for Read to wait; the next
// call is the poller's word that it fired. The count of expirations is
// left unread: arming the timer again resets it.
func (t *guardTimer) readable(fd uintptr) bool {
	if t.armed {
		// The reading that follows serves a Poke made until now.
		t.poked.Store(false)
		return true
	}
	t.armed = true
	t.spec.Value = unix.NsecToTimespec(max(t.d.Nanoseconds(), 1)) // 0 would disarm
	_, _, t.errno = unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&t.spec)), 0, 0, 0)
	// A Poke before the timer was armed is seen here; one after it
	// re-arms the timer to fire at once.
	return t.errno != 0 || t.poked.Swap(false)
}

// Poke makes the Sleep under way, or else the next one, return at once.
// Unlike the other methods it may be called from any goroutine.
func (t *guardTimer) Poke() {
	t.poked.Store(true)
	_ = t.rc.Control(func(fd uintptr) {
		spec := unix.ItimerSpec{Value: unix.Timespec{Nsec: 1}}
		unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	})
}

// Close ends a Sleep under way and every later one.
func (t *guardTimer) Close() error {
	if err := t.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}
