package runner

import (
	"math/bits"
	"sync"
)

// rssHist keeps the distribution of the jobs' peak RSS in constant memory:
// a log-linear histogram with 4 buckets per power of two, so a quantile is
// off by less than a quarter of its value (the bucket's upper bound is
// reported, capped at the maximum).
type rssHist struct {
	mu     sync.Mutex
	n      int64
	top    int64
	counts [256]int64
}

func rssBucket(v int64) int {
	if v < 8 {
		return int(max(v, 0))
	}
	shift := bits.Len64(uint64(v)) - 3 // v>>shift is in 4..7
	return 8 + (shift-1)*4 + int(v>>shift) - 4
}

// rssUpper is the largest value in bucket b.
func rssUpper(b int) int64 {
	if b < 8 {
		return int64(b)
	}
	shift := (b-8)/4 + 1
	top := int64((b-8)%4 + 4)
	return (top+1)<<shift - 1
}

func (h *rssHist) add(v int64) {
	if v <= 0 {
		return // unknown (not started, or no rusage)
	}
	h.mu.Lock()
	h.n++
	h.top = max(h.top, v)
	h.counts[rssBucket(v)]++
	h.mu.Unlock()
}

func (h *rssHist) max() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.top
}

// quantile returns the q-quantile (0 < q <= 1), 0 when empty.
func (h *rssHist) quantile(q float64) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		return 0
	}
	want := int64(q*float64(h.n) + 0.5)
	want = min(max(want, 1), h.n)
	var acc int64
	for b, c := range h.counts {
		acc += c
		if acc >= want {
			return min(rssUpper(b), h.top)
		}
	}
	return h.top
}
