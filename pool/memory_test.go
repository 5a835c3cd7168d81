package pool_test

import (
	"context"
	"iter"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// heapSampler records the peak of live+unswept heap objects while it runs,
// reading runtime/metrics (no stop-the-world, unlike ReadMemStats).
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

const heapObjects = "/memory/classes/heap/objects:bytes"

func (h *heapSampler) note() {
	s := [1]metrics.Sample{{Name: heapObjects}}
	metrics.Read(s[:])
	v := s[0].Value.Uint64()
	for {
		p := h.peak.Load()
		if v <= p || h.peak.CompareAndSwap(p, v) {
			return
		}
	}
}

func startSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.note()
	h.wg.Go(func() {
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				h.note()
			}
		}
	})
	return h
}

func (h *heapSampler) finish() uint64 {
	close(h.stop)
	h.wg.Wait()
	h.note()
	return h.peak.Load()
}

// payloads generates n fresh 1 KiB items, lazily: an eager pool would hold
// all of them at once (1 GiB for 1,000,000 items).
func payloads(n int) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for i := range n {
			b := make([]byte, 1024)
			b[0] = byte(i)
			if !yield(b) {
				return
			}
		}
	}
}

// gcEvery is the number of items between the collections peakHeap forces.
const gcEvery = 8192

// peakHeap maps n lazily generated items and returns the peak heap seen.
//
// The collector's own pacing is switched off and a collection is forced
// every gcEvery items instead, so both runs collect at the same points:
// the peak is then what is held plus at most gcEvery items of garbage,
// whatever the load on the machine. (With pacing on, the peak is the GC
// target plus however far allocation overshoots it while a starved
// background mark runs, and a long run samples more overshoots than a short
// one, which made the ratio noise rather than a measurement.)
func peakHeap(t *testing.T, p *pool.Pool, n int) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	h := startSampler()
	fn := func(ctx context.Context, b []byte) (int, error) {
		s := 0
		for _, c := range b[:64] {
			s += int(c)
		}
		return s, nil
	}
	got := 0
	for r := range pool.Map(context.Background(), p, payloads(n), fn) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		got++
		if got%gcEvery == 0 {
			h.note() // sample from the consumer too, independent of scheduling
			runtime.GC()
		}
	}
	if got != n {
		t.Fatalf("got %d results, want %d", got, n)
	}
	return h.finish()
}

func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("maps 1,000,000 items")
	}
	p := newPool(t, 4)
	// Warm up so that both measurements start from the same state.
	peakHeap(t, p, 10_000)
	small := peakHeap(t, p, 10_000)
	large := peakHeap(t, p, 1_000_000)
	t.Logf("peak heap: 10,000 items %d KiB, 1,000,000 items %d KiB (ratio %.2f)",
		small>>10, large>>10, float64(large)/float64(small))
	if float64(large) > 1.5*float64(small) {
		t.Fatalf("peak heap for 1,000,000 items (%d KiB) exceeds 1.5x the peak for 10,000 (%d KiB)", large>>10, small>>10)
	}
}
