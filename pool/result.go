package pool

// Result is the outcome of one input item of Map or MapOrdered.
type Result[T, R any] struct {
	// Index is the item's 0-based position in the input.
	Index int
	// Input is the item.
	Input T
	// Value is fn's result (the zero value if fn did not return).
	Value R
	// Err is fn's error, a *PanicError if fn panicked, an error wrapping
	// ErrNotStarted if the item never started, or ErrClosed if the pool was
	// closed before the item could start.
	Err error
}
