package pool

import (
	"context"
	"errors"
	"fmt"
)

// ErrClosed is returned by Go, and carried by Map results, when the pool was
// closed before the task could start.
var ErrClosed = errors.New("pool: closed")

// ErrGoexit is the error of a task that called [runtime.Goexit] (for
// example through testing.T.FailNow) instead of returning. The pool
// replaces the worker whose goroutine ended.
var ErrGoexit = errors.New("pool: task called runtime.Goexit")

// ErrNilTask is returned by Go when the task is nil.
var ErrNilTask = errors.New("pool: nil task")

// mustContext panics, naming call, when ctx is nil, before call changes
// anything: a nil Context is a programming error, which the context package
// reports the same way (context.WithCancel(nil) panics), and Go and Close
// would otherwise fail later with a bare nil dereference (Close after it
// had closed the pool).
func mustContext(ctx context.Context, call string) {
	if ctx == nil {
		panic("pool: " + call + " called with a nil context; pass context.Background()")
	}
}

// PanicError is the error a task (or hook) that panicked returns instead. The
// worker that ran it survives.
type PanicError struct {
	// Value is the value passed to panic.
	Value any
	// Stack is the goroutine stack at the panic, as by [runtime/debug.Stack].
	Stack []byte
}

// Error returns the panic value and the stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("pool: task panicked: %v\n\n%s", e.Value, e.Stack)
}

// Unwrap returns the panic value if it is an error, so that errors.Is and
// errors.As see through a panic(err).
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}
