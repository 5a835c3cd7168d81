package memory

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// countFile is an open cgroup file holding one byte count (memory.current,
// memory.usage_in_bytes), read again from its start with a raw pread(2):
// the guard reads it hundreds of times a second next to the limit, and a
// raw system call leaves the Go scheduler asleep (see guardTimer). A
// cgroup file's read returns at once.
type countFile struct {
	f   *os.File
	rc  syscall.RawConn
	buf [32]byte
}

func openCountFile(name string) (*countFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &countFile{f: f, rc: rc}, nil
}

// Read returns the count the file holds now.
func (c *countFile) Read() (int64, error) {
	var n uintptr
	var errno syscall.Errno
	err := c.rc.Control(func(fd uintptr) {
		// The offset, 0, fills the last arguments whatever their layout.
		n, _, errno = unix.RawSyscall6(unix.SYS_PREAD64, fd, uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)), 0, 0, 0)
	})
	if err == nil && errno != 0 {
		err = errno
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", c.f.Name(), err)
	}
	return parseCount(c.f.Name(), c.buf[:n])
}

func (c *countFile) Close() error { return c.f.Close() }

// parseCount parses a file's decimal byte count, spaces around it left
// out, without allocating.
func parseCount(name string, b []byte) (int64, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || len(b) > 18 {
		return 0, fmt.Errorf("%s: %q is not a byte count", name, b)
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%s: %q is not a byte count", name, b)
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}
