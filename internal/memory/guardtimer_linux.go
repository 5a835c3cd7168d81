package memory

import (
	"errors"
	"fmt"
	"os"
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
// For the same reason the timer is armed and read, and the cgroup read,
// with raw system calls ([syscall.RawSyscall] does not enter the
// scheduler): each returns at once (a timerfd opened non-blocking, a
// cgroup file's counter).
type guardTimer struct {
	f  *os.File
	rc syscall.RawConn
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
	return &guardTimer{f: f, rc: rc}, nil
}

// Sleep returns after d, or with an error once Close is called.
func (t *guardTimer) Sleep(d time.Duration) error {
	armed := false
	var errno syscall.Errno
	var ticks [8]byte
	// Read calls the function, and waits for the poller's word that the
	// timer is readable each time it returns false.
	err := t.rc.Read(func(fd uintptr) bool {
		if !armed {
			armed = true
			// Arming resets the count of expirations, so a readiness
			// left from before ends in EAGAIN below, not in a short sleep.
			spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(d.Nanoseconds(), 1))} // 0 would disarm
			_, _, errno = unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
			return errno != 0
		}
		_, _, errno = unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&ticks[0])), uintptr(len(ticks)))
		if errno == unix.EAGAIN {
			errno = 0
			return false
		}
		return true
	})
	if err == nil && errno != 0 {
		err = errno
	}
	if err != nil {
		return fmt.Errorf("timerfd: %w", err)
	}
	return nil
}

// Close ends a Sleep under way and every later one.
func (t *guardTimer) Close() error {
	if err := t.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}
