package pool

import "context"

// What the pool knows of a running Map: the items it hands to its
// workers and a handle to wake or abort the Map.

// mapItem is one item of a running Map, run by a worker.
type mapItem interface {
	// run runs the item with the task context and returns its error.
	run(ctx context.Context) error
	// finish publishes the item's result (err includes hook panics) and
	// wakes the consumer if it sleeps; started is false for an item that
	// never ran.
	finish(err error, started bool)
	// notStarted returns the error of an item that must not start (its
	// Map's context is done, or an earlier item failed fast), else nil.
	notStarted() error
}

// mapHandle is how the pool reaches a running Map.
type mapHandle interface {
	// wake wakes the Map's consumer (never blocks).
	wake()
	// abort cancels the Map's context.
	abort(cause error)
}

func (p *Pool) registerMap(h mapHandle) {
	p.mu.Lock()
	p.maps[h] = struct{}{}
	p.mu.Unlock()
}

func (p *Pool) unregisterMap(h mapHandle) {
	p.mu.Lock()
	delete(p.maps, h)
	p.mu.Unlock()
}
