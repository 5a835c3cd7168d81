//go:build unix

package runner

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// stdinFeed writes an attempt's Stdin (a --pipe block) into a pipe that
// is the job's stdin. The write end is in the runtime's poller, so
// closing it ends a write the job no longer reads; a job that exits
// without reading all of its block just loses the rest (EPIPE), as a
// reader of a pipe does. All methods of a nil *stdinFeed do nothing.
type stdinFeed struct {
	src   io.Reader
	child int      // the read end, for the job; -1 once closed
	w     *os.File // the write end, ration's
	done  chan struct{}
}

// newStdinFeed makes the pipe for src; nil src: no feed (/dev/null).
func newStdinFeed(src io.Reader) (*stdinFeed, error) {
	if src == nil {
		return nil, nil
	}
	var p [2]int
	syscall.ForkLock.RLock()
	err := syscall.Pipe(p[:])
	if err == nil {
		syscall.CloseOnExec(p[0])
		syscall.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	if err := syscall.SetNonblock(p[1], true); err != nil {
		_ = syscall.Close(p[0])
		_ = syscall.Close(p[1])
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	return &stdinFeed{src: src, child: p[0], w: os.NewFile(uintptr(p[1]), "|stdin"), done: make(chan struct{})}, nil
}

// fd is the job's stdin: the pipe's read end, or def without a feed.
func (f *stdinFeed) fd(def uintptr) uintptr {
	if f == nil {
		return def
	}
	return uintptr(f.child)
}

// started closes the job's end in ration and, when the job started,
// writes the block on a goroutine of its own; otherwise it closes the
// write end too.
func (f *stdinFeed) started(ok bool) {
	if f == nil {
		return
	}
	_ = syscall.Close(f.child)
	f.child = -1
	if !ok {
		f.w.Close()
		close(f.done)
		return
	}
	go func() {
		defer close(f.done)
		_, _ = io.Copy(f.w, f.src) // EPIPE: the job did not read it all
		f.w.Close()
	}()
}

// wait, once the job has exited, ends a write still blocked (a child of
// the job still holds its stdin), or a read of a source that is an
// io.Closer (--round-robin's stream, waiting for a block), and waits for
// the writing goroutine.
func (f *stdinFeed) wait() {
	if f == nil {
		return
	}
	select {
	case <-f.done:
	default:
		f.w.Close()
		if c, ok := f.src.(io.Closer); ok {
			_ = c.Close()
		}
		<-f.done
	}
}
