// Package closedpipe gives a command the exit status of a shell pipeline
// whose reader went away (`ration report jl | head`): 141, 128+SIGPIPE,
// which a shell reports for a program that SIGPIPE killed. ration catches
// SIGPIPE (a write to the closed pipe fails with EPIPE instead), so each
// command would otherwise exit with the status of whatever error it made
// of the failed write.
//
// It belongs to the command line: it imports the standard library only, and
// no library package may import it.
package closedpipe

import (
	"errors"
	"io"
	"sync/atomic"
	"syscall"
)

// Status is the exit status after a write to a pipe without a reader.
const Status = 128 + 13

// Writer passes writes on to its writer and remembers whether one of them
// met a pipe without a reader. It is safe for concurrent use when its
// writer is.
type Writer struct {
	w      io.Writer
	closed atomic.Bool
}

// New returns a Writer writing to w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p to the Writer's writer.
func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil && errors.Is(err, syscall.EPIPE) {
		w.closed.Store(true)
	}
	return n, err
}

// Closed reports whether a write met a pipe without a reader.
func (w *Writer) Closed() bool { return w.closed.Load() }

// Exit returns the exit status of a command that returned code: Status
// when a write met a pipe without a reader (whatever the command made of
// the error), else code. A command that failed before it wrote keeps its
// status.
func (w *Writer) Exit(code int) int {
	if w.Closed() {
		return Status
	}
	return code
}

// Unwrap returns the writer that w writes to when w is a *Writer, else w:
// for a child process, which must get the file itself.
func Unwrap(w io.Writer) io.Writer {
	if c, ok := w.(*Writer); ok {
		return c.w
	}
	return w
}
