// Package pool_test compares ration's pool with errgroup (SetLimit), pond,
// ants and conc at the same size on the same work: trivial tasks and
// ~10 µs CPU tasks. Every benchmark op is one item, so ns/op is ns/item and
// allocs/op is allocs/item. The task function values are created once,
// outside the timed loop, so every allocation counted is the library's.
//
// Run: ./run.sh (see there), or go test -run NONE -bench . -count 10.
package pool_test

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/alitto/pond/v2"
	"github.com/panjf2000/ants/v2"
	concpool "github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/errgroup"

	"github.com/ration-run/ration/pool"
)

// size is the concurrency limit every library gets.
const size = 4

var sink atomic.Uint64

// spinIters is the loop count that takes about 10 µs, calibrated once.
var spinIters = calibrate()

func spin(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// calibrate finds the spin count for ~10 µs, taking the fastest of several
// runs so that other load on the machine does not inflate it.
func calibrate() int {
	const probe = 100_000
	best := time.Duration(1 << 62)
	for range 20 {
		t := time.Now()
		sink.Add(spin(probe))
		best = min(best, time.Since(t))
	}
	return int(float64(probe) * float64(10*time.Microsecond) / float64(best))
}

type work struct {
	name string
	fn   func()
}

var works = []work{
	{"trivial", func() {}},
	{"cpu10us", func() { sink.Add(spin(spinIters)) }},
}

func BenchmarkCalibration(b *testing.B) {
	for b.Loop() {
		sink.Add(spin(spinIters))
	}
	b.ReportMetric(float64(spinIters), "spin-iters")
}

// lib runs n items of fn on one library's pool, from submission to the
// end of the last item.
type lib struct {
	name string
	run  func(b *testing.B, fn func())
}

var libs = []lib{
	{"errgroup", func(b *testing.B, fn func()) {
		task := func() error { fn(); return nil }
		var g errgroup.Group
		g.SetLimit(size)
		b.ResetTimer()
		for range b.N {
			g.Go(task)
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
	}},
	{"pond", func(b *testing.B, fn func()) {
		p := pond.NewPool(size)
		b.ResetTimer()
		for range b.N {
			if err := p.Go(fn); err != nil {
				b.Fatal(err)
			}
		}
		p.StopAndWait()
	}},
	// pond's default queue is unbounded (it holds every submitted task);
	// this variant bounds it to the pool size, blocking the submitter, which
	// is the backpressure the others provide.
	{"pond-bounded", func(b *testing.B, fn func()) {
		p := pond.NewPool(size, pond.WithQueueSize(size))
		b.ResetTimer()
		for range b.N {
			if err := p.Go(fn); err != nil {
				b.Fatal(err)
			}
		}
		p.StopAndWait()
	}},
	{"ants", func(b *testing.B, fn func()) {
		p, err := ants.NewPool(size)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Release()
		var wg sync.WaitGroup
		task := func() { fn(); wg.Done() }
		b.ResetTimer()
		for range b.N {
			wg.Add(1)
			if err := p.Submit(task); err != nil {
				b.Fatal(err)
			}
		}
		wg.Wait()
	}},
	{"conc", func(b *testing.B, fn func()) {
		p := concpool.New().WithMaxGoroutines(size)
		b.ResetTimer()
		for range b.N {
			p.Go(fn)
		}
		p.Wait()
	}},
	{"ration-go", func(b *testing.B, fn func()) {
		p := pool.New(size)
		defer p.Close(context.Background())
		task := func(context.Context) error { fn(); return nil }
		ctx := context.Background()
		b.ResetTimer()
		for range b.N {
			if err := p.Go(ctx, task); err != nil {
				b.Fatal(err)
			}
		}
		if err := p.Wait(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
	}},
	// A per-request Group on the shared pool: errgroup.WithContext's shape.
	{"ration-group", func(b *testing.B, fn func()) {
		p := pool.New(size)
		defer p.Close(context.Background())
		task := func(context.Context) error { fn(); return nil }
		b.ResetTimer()
		g, _ := p.Group(context.Background())
		for range b.N {
			g.Go(task)
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
	}},
	{"ration-map", func(b *testing.B, fn func()) { benchMap(b, fn, pool.Map[int, int]) }},
	{"ration-map-ordered", func(b *testing.B, fn func()) { benchMap(b, fn, pool.MapOrdered[int, int]) }},
}

// BenchmarkPool runs every library on every work; one op is one item.
func BenchmarkPool(b *testing.B) {
	for _, w := range works {
		for _, l := range libs {
			b.Run("work="+w.name+"/lib="+l.name, func(b *testing.B) {
				b.ReportAllocs()
				c0 := cpuTime()
				l.run(b, w.fn)
				// Wall time per item depends on how much of the machine
				// the other processes leave; process CPU time per item
				// (user+sys, all threads) measures the library's cost
				// and is far less sensitive to that load.
				b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func count(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

type mapper func(context.Context, *pool.Pool, iter.Seq[int], func(context.Context, int) (int, error), ...pool.MapOption) iter.Seq[pool.Result[int, int]]

func benchMap(b *testing.B, work func(), m mapper) {
	p := pool.New(size)
	defer p.Close(context.Background())
	fn := func(_ context.Context, i int) (int, error) { work(); return i, nil }
	b.ResetTimer()
	n := 0
	for r := range m(context.Background(), p, count(b.N), fn) {
		n += r.Value
	}
	b.StopTimer()
	sink.Add(uint64(n))
}
