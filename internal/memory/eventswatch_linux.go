package memory

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// eventsWatch wakes the guard when the kernel counts an event in a cgroup
// v2 memory.events file. The kernel counts "max" when a charge meets
// memory.max, before it reclaims and, when reclaim fails, before the OOM
// killer fires: the guard then reads at once instead of at its next
// reading, which a busy machine's scheduler may have made late. The file
// is readable in a read-only cgroupfs, and the kernel notifies pollers
// of it (at most once every 10 ms per file), so the watch is a goroutine
// parked in Go's network poller: nothing runs between two events.
type eventsWatch struct {
	f      *os.File
	wakes  atomic.Int64
	closed chan struct{}
}

// watchEvents calls wake from a goroutine of its own each time the kernel
// notifies a change of the memory.events file at path in which the counts
// of "high", "max" or "oom" grew. It returns an error when the file cannot
// be opened or read: a cgroup v1 hierarchy has none.
func watchEvents(path string, wake func()) (*eventsWatch, error) {
	f, rc, err := openRaw(path)
	if err != nil {
		return nil, err
	}
	w := &eventsWatch{f: f, closed: make(chan struct{})}
	buf := make([]byte, 512)
	count := func(fd uintptr) (int64, syscall.Errno) {
		n, _, errno := unix.RawSyscall6(unix.SYS_PREAD64, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		if errno != 0 {
			return 0, errno
		}
		return pressureEvents(buf[:n]), 0
	}
	var last int64
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) { last, errno = count(fd) }); err != nil || errno != 0 {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, cmp.Or(err, error(errno)))
	}
	notified := func(fd uintptr) bool {
		if n, errno := count(fd); errno == 0 && n != last {
			last = n
			w.wakes.Add(1)
			wake()
		}
		return false // wait for the next notification
	}
	go func() {
		defer close(w.closed)
		// Read waits in the poller each time notified returns false, and
		// returns once Close closes the file; a file the poller cannot
		// watch makes it return at once.
		_ = rc.Read(notified)
	}()
	return w, nil
}

// Wakes returns how many notifications called wake.
func (w *eventsWatch) Wakes() int64 { return w.wakes.Load() }

// Close ends the watch and waits for its goroutine.
func (w *eventsWatch) Close() {
	w.f.Close()
	<-w.closed
}

// pressureEvents returns the sum of the counts of "high", "max" and "oom"
// in the text of a memory.events file: the events that come before an
// OOM kill. Lines it cannot read count 0.
func pressureEvents(b []byte) int64 {
	var n int64
	for line := range bytes.Lines(b) {
		k, v, ok := bytes.Cut(bytes.TrimSpace(line), []byte(" "))
		if !ok {
			continue
		}
		switch string(k) {
		case "high", "max", "oom":
			if c, err := strconv.ParseInt(string(v), 10, 64); err == nil && c > 0 {
				n += c
			}
		}
	}
	return n
}
