package pool

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Summary summarizes a set of durations. Quantiles are estimated from a
// base-2 logarithmic histogram: each is the upper bound of its bucket, so
// it overestimates by less than a factor of 2.
type Summary struct {
	// Count is the number of durations, Total their sum (the mean is
	// Total/Count).
	Count int64
	Total time.Duration
	Max   time.Duration
	P50   time.Duration
	P90   time.Duration
	P99   time.Duration
}

// hist is a lock-free log2 histogram of nanosecond durations.
type hist struct {
	count, total, max atomic.Int64
	buckets           [64]atomic.Int64 // bucket i: durations < 2^i ns
}

func (h *hist) add(d int64) {
	d = max(d, 0)
	h.buckets[bits.Len64(uint64(d))&63].Add(1)
	h.total.Add(d)
	h.count.Add(1)
	for {
		m := h.max.Load()
		if d <= m || h.max.CompareAndSwap(m, d) {
			break
		}
	}
}

func (h *hist) summary() Summary {
	var b [64]int64
	var n int64
	for i := range b {
		b[i] = h.buckets[i].Load()
		n += b[i]
	}
	s := Summary{
		Count: h.count.Load(),
		Total: time.Duration(h.total.Load()),
		Max:   time.Duration(h.max.Load()),
	}
	q := func(f float64) time.Duration {
		if n == 0 {
			return 0
		}
		want := int64(f*float64(n)) + 1
		var acc int64
		for i := range b {
			acc += b[i]
			if acc >= want {
				return min(time.Duration(uint64(1)<<i-1), s.Max)
			}
		}
		return s.Max
	}
	s.P50, s.P90, s.P99 = q(0.50), q(0.90), q(0.99)
	return s
}
