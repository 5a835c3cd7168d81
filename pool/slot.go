package pool

import (
	"context"
	"math/bits"
	"sync"
	"unsafe"
)

// taskKey is the context key under which a task context finds itself.
type taskKey struct{}

// taskCtx is the context a task runs with: its parent plus the pool and
// slot. It is immutable, so one value is shared by every task that runs in
// the same slot with the same parent; that is what keeps submission free of
// allocations when callers reuse a context.
type taskCtx struct {
	context.Context
	pool *Pool
	slot int
}

// Value returns the task context itself for taskKey and defers to the
// parent for every other key.
func (c *taskCtx) Value(key any) any {
	if _, ok := key.(taskKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// Slot returns the 1-based slot of the task whose context ctx is (or is
// derived from), like GNU parallel's {%}: among the tasks of one pool that
// run at the same time, no two have the same slot, and a starting task takes
// the lowest free slot. Slot returns 0 for a context that does not belong to
// a task.
func Slot(ctx context.Context) int {
	if ctx == nil {
		return 0
	}
	tc, _ := ctx.Value(taskKey{}).(*taskCtx)
	if tc == nil {
		return 0
	}
	return tc.slot
}

// slotSet hands out the lowest free slot and caches one task context per
// slot. The lock is held only for a few instructions and never around user
// code.
type slotSet struct {
	mu    sync.Mutex
	used  []uint64   // bit s-1 set: slot s in use
	cache []*taskCtx // cache[s-1]: last task context of slot s
}

func (s *slotSet) acquire(p *Pool, parent context.Context) (int, *taskCtx) {
	s.mu.Lock()
	w := 0
	for w < len(s.used) && s.used[w] == ^uint64(0) {
		w++
	}
	if w == len(s.used) {
		s.used = append(s.used, 0)
		s.cache = append(s.cache, make([]*taskCtx, 64)...)
	}
	b := bits.TrailingZeros64(^s.used[w])
	s.used[w] |= 1 << b
	i := w*64 + b
	tc := s.cache[i]
	if tc == nil || !sameCtx(tc.Context, parent) {
		tc = &taskCtx{Context: parent, pool: p, slot: i + 1}
		s.cache[i] = tc
	}
	s.mu.Unlock()
	return i + 1, tc
}

func (s *slotSet) release(slot int) {
	i := slot - 1
	s.mu.Lock()
	s.used[i/64] &^= 1 << (i % 64)
	s.mu.Unlock()
}

// sameCtx reports whether a and b are the identical interface value
// (same dynamic type and same data word). Unlike ==, it cannot panic on
// non-comparable context types; a false "different" only costs a cache miss.
func sameCtx(a, b context.Context) bool {
	ia := (*[2]unsafe.Pointer)(unsafe.Pointer(&a))
	ib := (*[2]unsafe.Pointer)(unsafe.Pointer(&b))
	return ia[0] == ib[0] && ia[1] == ib[1]
}
