package memory

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"syscall"
	"unsafe"

	"github.com/ration-run/ration/cgroup"
	"golang.org/x/sys/unix"
)

// countFile is an open cgroup file holding one byte count (memory.current,
// memory.usage_in_bytes), read again from its start with a raw pread(2):
// the guard reads it hundreds of times a second next to the limit, and a
// raw system call leaves the Go scheduler asleep (see guardTimer). A
// cgroup file's read returns at once.
type countFile struct {
	f     *os.File
	rc    syscall.RawConn
	pread func(fd uintptr) // c.preadFD, made once: a method value allocates
	n     uintptr
	errno syscall.Errno
	buf   [32]byte
}

func openCountFile(name string) (*countFile, error) {
	f, rc, err := openRaw(name)
	if err != nil {
		return nil, err
	}
	c := &countFile{f: f, rc: rc}
	c.pread = c.preadFD
	return c, nil
}

// Read returns the count the file holds now.
func (c *countFile) Read() (int64, error) {
	b, err := c.read()
	if err != nil {
		return 0, err
	}
	return parseCount(c.f.Name(), b)
}

// ReadLimit returns the limit the file (memory.max, memory.limit_in_bytes)
// holds now, as cgroup.ParseMemLimit reads it; 0 when there is none.
func (c *countFile) ReadLimit() (int64, error) {
	b, err := c.read()
	if err != nil {
		return 0, err
	}
	n, unlimited, err := cgroup.ParseMemLimit(string(b))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", c.f.Name(), err)
	}
	if unlimited {
		return 0, nil
	}
	return n, nil
}

func (c *countFile) read() ([]byte, error) {
	err := c.rc.Control(c.pread)
	if err == nil && c.errno != 0 {
		err = c.errno
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.f.Name(), err)
	}
	return c.buf[:c.n], nil
}

func (c *countFile) preadFD(fd uintptr) {
	// The offset, 0, fills the last arguments whatever their layout.
	c.n, _, c.errno = unix.RawSyscall6(unix.SYS_PREAD64, fd, uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)), 0, 0, 0)
}

func (c *countFile) Close() error { return c.f.Close() }

// parseCount parses a file's decimal byte count, spaces around it left
// out, as cgroup's parser of memory.current does but without allocating:
// the guard reads one hundreds of times a second.
func parseCount(name string, b []byte) (int64, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0, fmt.Errorf("%s: %q is not a byte count", name, b)
	}
	var n int64
	for _, c := range b {
		d := int64(c - '0')
		if c < '0' || c > '9' || n > (math.MaxInt64-d)/10 {
			return 0, fmt.Errorf("%s: %q is not a byte count", name, b)
		}
		n = n*10 + d
	}
	return n, nil
}

// openRaw opens the file name for reading with raw system calls on its
// descriptor (rc's Control and Read, which keep it open meanwhile).
func openRaw(name string) (*os.File, syscall.RawConn, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, rc, nil
}
