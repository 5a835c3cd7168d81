package cgroup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// errNotRegular is the error of readFile for a path that is not a regular
// file.
var errNotRegular = errors.New("not a regular file")

// readFile is os.ReadFile for kernel files, which are regular files (also
// in /proc and cgroupfs, whatever size they report): anything else at the
// path (a FIFO or a device in a snapshot given with Reader.Root) is an
// error wrapping errNotRegular, returned without blocking. The open does
// not wait for a FIFO's writer (O_NONBLOCK), and nothing but a regular
// file is read.
func readFile(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w (%s)", errNotRegular, fileKind(fi.Mode()))}
	}
	return io.ReadAll(f)
}

// fileKind names the type of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}
