//go:build unix

package runcmd

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// makeFIFO makes the FIFO name and writes r into it once the job opens
// it; what it returns, once the job ended, ends a write the job did not
// read (or an open it never made) and removes the FIFO. A FIFO that
// cannot be made is an error: the job must not run without its block.
func (pf *pipeFiles) makeFIFO(name string, r io.Reader) (func(), error) {
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		return nil, fmt.Errorf("--fifo: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		_, _ = io.Copy(f, r) // EPIPE: the job did not read it all
		f.Close()
	}()
	return func() {
		// A reader of our own lets an open for writing that is waiting
		// go on; it then writes into a pipe nobody reads, and gets EPIPE
		// once this reader is closed. The writer may not have begun its
		// open yet (a busy machine): open a reader again until it ends.
		for {
			if rf, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				rf.Close()
			}
			select {
			case <-done:
				_ = os.Remove(name)
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}, nil
}
