package pool

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"
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
// slot. Slots 1..64 are taken and released with one atomic operation on a
// bit mask (a lock here was a tenth of a trivial task's cost); slots above
// 64, needed only when more than 64 tasks run at once, under a lock that
// is held for a few instructions and never around user code. A slot's
// cache entry is touched only by the holder of the slot.
type slotSet struct {
	low   atomic.Uint64 // bit s-1 set: slot s (1..64) in use
	cache [64]*taskCtx  // cache[s-1]: last task context of slot s

	mu        sync.Mutex
	used      []uint64   // slots above 64: bit s-65 set: slot s in use
	highCache []*taskCtx // highCache[s-65]: last task context of slot s
}

func (s *slotSet) acquire(p *Pool, parent context.Context) (int, *taskCtx) {
	for {
		b := s.low.Load()
		if b == ^uint64(0) {
			return s.acquireHigh(p, parent)
		}
		i := bits.TrailingZeros64(^b)
		if s.low.CompareAndSwap(b, b|1<<i) {
			tc := s.cache[i]
			if tc == nil || !sameCtx(tc.Context, parent) {
				tc = &taskCtx{Context: parent, pool: p, slot: i + 1}
				s.cache[i] = tc
			}
			return i + 1, tc
		}
	}
}

func (s *slotSet) acquireHigh(p *Pool, parent context.Context) (int, *taskCtx) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := 0
	for w < len(s.used) && s.used[w] == ^uint64(0) {
		w++
	}
	if w == len(s.used) {
		s.used = append(s.used, 0)
		s.highCache = append(s.highCache, make([]*taskCtx, 64)...)
	}
	b := bits.TrailingZeros64(^s.used[w])
	s.used[w] |= 1 << b
	i := w*64 + b
	tc := s.highCache[i]
	if tc == nil || !sameCtx(tc.Context, parent) {
		tc = &taskCtx{Context: parent, pool: p, slot: 65 + i}
		s.highCache[i] = tc
	}
	return 65 + i, tc
}

func (s *slotSet) release(slot int) {
	if slot <= 64 {
		s.low.And(^(uint64(1) << (slot - 1)))
		return
	}
	i := slot - 65
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
