package pool_test

// Randomized stress tests for Map, MapOrdered and Collect: many small
// scenarios per test, each checked against the documented guarantees, with
// hang guards. They assert no timings.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// smSizer serializes Resize calls and tracks, for each running Map, the
// largest size set since the Map's previous pull: the size the consumer
// read for its pull bound is at most that.
type smSizer struct {
	mu       sync.Mutex
	p        *pool.Pool
	trackers map[*int]struct{}
}

func (s *smSizer) resize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for tr := range s.trackers {
		*tr = max(*tr, n)
	}
	s.p.Resize(n)
}

// mark starts a new tracking period for tr at the current size.
func (s *smSizer) mark(tr *int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trackers == nil {
		s.trackers = map[*int]struct{}{}
	}
	s.trackers[tr] = struct{}{}
	*tr = s.p.Size()
}

func (s *smSizer) maxSince(tr *int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(*tr, s.p.Size())
}

func (s *smSizer) drop(tr *int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.trackers, tr)
}

type smBodyPanic struct{}
type smInputPanic struct{}

// smMapOnce runs one random Map or MapOrdered on sz.p (FailFast, Window,
// a failing or panicking fn, a break, a panic in the loop body or the
// input, a canceled ctx, resizes from the loop body) and checks the result.
func smMapOnce(sz *smSizer, r *rand.Rand) error {
	p := sz.p
	tr := new(int)
	sz.mark(tr)
	defer sz.drop(tr)
	n := r.IntN(60)
	ordered, failFast := r.IntN(2) == 0, r.IntN(3) == 0
	window := 0
	if r.IntN(4) == 0 {
		window = 1 + r.IntN(8)
	}
	failAt, fnPanicAt := -1, -1
	if r.IntN(3) == 0 && n > 0 {
		failAt = r.IntN(n)
	}
	if r.IntN(6) == 0 && n > 0 {
		fnPanicAt = r.IntN(n)
	}
	breakAt, bodyPanicAt, inPanicAt, cancelAt := -1, -1, -1, -1
	switch r.IntN(6) {
	case 0:
		breakAt = r.IntN(n + 1)
	case 1:
		bodyPanicAt = r.IntN(n + 1)
	case 2:
		inPanicAt = r.IntN(n + 1)
	case 3:
		cancelAt = r.IntN(n + 1)
	}
	resizeEvery := 0
	if r.IntN(2) == 0 {
		resizeEvery = 1 + r.IntN(5)
	}
	slow := r.IntN(3) == 0
	desc := fmt.Sprintf("n=%d ordered=%v failFast=%v window=%d failAt=%d fnPanicAt=%d break=%d bodyPanic=%d inputPanic=%d cancelAt=%d resizeEvery=%d",
		n, ordered, failFast, window, failAt, fnPanicAt, breakAt, bodyPanicAt, inPanicAt, cancelAt, resizeEvery)
	boom := errors.New("boom")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var pulled, delivered, over, running atomic.Int64
	started := make([]atomic.Int32, n)
	in := func(yield func(int) bool) {
		for i := range n {
			if i == inPanicAt {
				panic(smInputPanic{})
			}
			b := int64(sz.maxSince(tr) + pool.PullSlack)
			if window > 0 {
				b = int64(window)
			}
			if o := pulled.Add(1) - delivered.Load() - b; o > over.Load() {
				over.Store(o)
			}
			sz.mark(tr)
			if !yield(i) {
				return
			}
		}
	}
	fn := func(ctx context.Context, i int) (int, error) {
		running.Add(1)
		defer running.Add(-1)
		started[i].Add(1)
		if slow && i%3 == 0 {
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(time.Duration(1+i%5) * 10 * time.Microsecond):
			}
		}
		if i == fnPanicAt {
			panic(i)
		}
		if i == failAt {
			return 0, boom
		}
		return i * 2, nil
	}
	why := errors.New("StopErr not set")
	opts := []pool.MapOption{pool.StopErr(&why)}
	if failFast {
		opts = append(opts, pool.FailFast())
	}
	if window > 0 {
		opts = append(opts, pool.Window(window))
	}
	mapper := pool.Map[int, int]
	if ordered {
		mapper = pool.MapOrdered[int, int]
	}
	var results []pool.Result[int, int]
	var recovered any
	broke := false
	func() {
		defer func() { recovered = recover() }()
		for res := range mapper(ctx, p, in, fn, opts...) {
			k := len(results)
			delivered.Add(1)
			results = append(results, res)
			if resizeEvery > 0 && k%resizeEvery == 0 {
				sz.resize(1 + r.IntN(6))
			}
			if k == cancelAt {
				cancel()
			}
			if k == bodyPanicAt {
				panic(smBodyPanic{})
			}
			if k == breakAt {
				broke = true
				break
			}
		}
	}()
	if running.Load() != 0 {
		return fmt.Errorf("%s: fn still running after the loop ended", desc)
	}
	switch recovered.(type) {
	case nil:
	case smBodyPanic, smInputPanic:
		// Re-raised as itself after the cleanup (checked above).
		return nil
	default:
		return fmt.Errorf("%s: recovered %v", desc, recovered)
	}
	if o := over.Load(); o > 0 {
		return fmt.Errorf("%s: %d items pulled beyond the pull bound", desc, o)
	}
	if !broke && int64(len(results)) != pulled.Load() {
		return fmt.Errorf("%s: %d items pulled, %d results", desc, pulled.Load(), len(results))
	}
	seen := make([]bool, n)
	firstErr := -1
	for k, res := range results {
		if res.Index < 0 || res.Index >= n || seen[res.Index] {
			return fmt.Errorf("%s: result %+v is out of range or repeated", desc, res)
		}
		seen[res.Index] = true
		if ordered && res.Index != k {
			return fmt.Errorf("%s: MapOrdered result %d has index %d", desc, k, res.Index)
		}
		if c := started[res.Index].Load(); c > 1 {
			return fmt.Errorf("%s: item %d started %d times", desc, res.Index, c)
		}
		if res.Err == nil {
			if res.Value != 2*res.Index {
				return fmt.Errorf("%s: bad value %+v", desc, res)
			}
			continue
		}
		if firstErr < 0 {
			firstErr = k
		}
		if errors.Is(res.Err, pool.ErrNotStarted) && started[res.Index].Load() != 0 {
			return fmt.Errorf("%s: item %d yields ErrNotStarted but started", desc, res.Index)
		}
	}
	if failFast && firstErr >= 0 && cancelAt < 0 {
		// The first error delivered is a real failure, never a sibling's.
		var pe *pool.PanicError
		if e := results[firstErr].Err; !errors.Is(e, boom) && !errors.As(e, &pe) {
			return fmt.Errorf("%s: first error delivered: %v", desc, e)
		}
	}
	switch {
	case broke:
		if why != nil {
			return fmt.Errorf("%s: StopErr after a break = %v", desc, why)
		}
	case cancelAt < 0 && !(failFast && (failAt >= 0 || fnPanicAt >= 0)):
		if why != nil || len(results) != n {
			return fmt.Errorf("%s: complete run: %d results, StopErr %v", desc, len(results), why)
		}
	}
	return nil
}

// TestStressMapRandom: several random Maps (see smMapOnce), a Collect and
// Go tasks share one pool, sometimes with a goroutine resizing it between
// 1 and 6. Each Map yields one Result per pulled item, in input order for
// MapOrdered, never pulls beyond size+PullSlack (or Window) for the size at
// the pull, delivers a FailFast failure first, reports StopErr, re-raises
// panics as themselves and leaves no fn running; Collect returns the
// values before the first failure and that failure.
func TestStressMapRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 1))
	for round := range 600 {
		p := pool.New(1 + r.IntN(5))
		sz := &smSizer{p: p}
		nm := 1 + r.IntN(3)
		errs := make(chan error, nm+1)
		var wg sync.WaitGroup
		for range nm {
			rr := rand.New(rand.NewPCG(r.Uint64(), 2))
			wg.Go(func() {
				if err := smMapOnce(sz, rr); err != nil {
					errs <- err
				}
			})
		}
		if r.IntN(3) == 0 {
			cn := r.IntN(30)
			failAt := r.IntN(cn + 5)
			wg.Go(func() {
				got, err := pool.Collect(context.Background(), p, seqN(cn), func(_ context.Context, i int) (int, error) {
					if i == failAt {
						return 0, errors.New("cboom")
					}
					return i + 1, nil
				})
				want := min(failAt, cn)
				if len(got) != want || (failAt < cn) != (err != nil) || (err != nil && err.Error() != "cboom") {
					errs <- fmt.Errorf("Collect n=%d failAt=%d: %v, %v", cn, failAt, got, err)
					return
				}
				for k, v := range got {
					if v != k+1 {
						errs <- fmt.Errorf("Collect: value %d is %d", k, v)
						return
					}
				}
			})
		}
		stop := make(chan struct{})
		var resizer sync.WaitGroup
		if r.IntN(2) == 0 {
			rr := rand.New(rand.NewPCG(r.Uint64(), 3))
			resizer.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					sz.resize([]int{1, 1, 2, 6}[rr.IntN(4)])
					for range rr.IntN(20) {
						runtime.Gosched()
					}
				}
			})
		}
		within(t, 10*time.Second, fmt.Sprintf("seed %d round %d", seed, round), func() {
			for range r.IntN(10) {
				if err := p.Go(context.Background(), func(context.Context) error { runtime.Gosched(); return nil }); err != nil {
					t.Error(err)
				}
			}
			wg.Wait()
			if err := p.Wait(); err != nil {
				t.Error(err)
			}
		})
		close(stop)
		resizer.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("seed %d round %d: %v", seed, round, err)
		}
		if t.Failed() {
			return
		}
		closeEmpty(t, p, fmt.Sprintf("seed %d round %d", seed, round))
	}
}

// TestStressMapClose: Maps (ordered or not, top-level or one nested in a task)
// and Go tasks run while Close is called, with a generous deadline or a
// short one that expires. Every Map ends, yields one Result per pulled item
// (ErrClosed, ErrNotStarted or the task's context error for those cut
// short), in order for MapOrdered; StopErr is nil or wraps ErrClosed; no
// fn is left running and the pool ends empty.
func TestStressMapClose(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 4))
	for round := range 600 {
		what := fmt.Sprintf("seed %d round %d", seed, round)
		p := pool.New(1 + r.IntN(4))
		nm := 1 + r.IntN(3)
		bad := make(chan string, 4*nm)
		var wg sync.WaitGroup
		var running atomic.Int64
		block := make(chan struct{})
		for m := range nm {
			// At most one nested Map: with every worker running a nested
			// Map's consumer, an item handed to the queue can wait forever
			// (see the map stress report).
			ordered, n, slow, nested := r.IntN(2) == 0, r.IntN(40), r.IntN(3), m == 0 && r.IntN(3) == 0
			desc := fmt.Sprintf("ordered=%v n=%d slow=%d nested=%v", ordered, n, slow, nested)
			body := func(ctx context.Context) {
				pulled, got, next := 0, 0, 0
				in := func(yield func(int) bool) {
					for k := range n {
						pulled++
						if !yield(k) {
							return
						}
					}
				}
				fn := func(ctx context.Context, k int) (int, error) {
					running.Add(1)
					defer running.Add(-1)
					switch {
					case slow == 1:
						runtime.Gosched()
					case slow == 2 && k%4 == 0:
						select {
						case <-block:
						case <-ctx.Done():
							return 0, ctx.Err()
						}
					}
					return k, nil
				}
				mapper := pool.Map[int, int]
				if ordered {
					mapper = pool.MapOrdered[int, int]
				}
				var why error
				seen := make(map[int]bool)
				for res := range mapper(ctx, p, in, fn, pool.StopErr(&why)) {
					got++
					if seen[res.Index] || (ordered && res.Index != next) {
						bad <- fmt.Sprintf("%s: result %d at position %d", desc, res.Index, next)
					}
					seen[res.Index] = true
					next++
					if e := res.Err; e != nil && !errors.Is(e, pool.ErrClosed) && !errors.Is(e, pool.ErrNotStarted) && !errors.Is(e, context.Canceled) {
						bad <- fmt.Sprintf("%s: item %d: %v", desc, res.Index, e)
					}
				}
				if got != pulled {
					bad <- fmt.Sprintf("%s: %d pulled, %d results", desc, pulled, got)
				}
				if why != nil && !errors.Is(why, pool.ErrClosed) {
					bad <- fmt.Sprintf("%s: StopErr %v", desc, why)
				}
			}
			wg.Add(1)
			if !nested {
				go func() { defer wg.Done(); body(context.Background()) }()
				continue
			}
			go func() {
				err := p.Go(context.Background(), func(ctx context.Context) error {
					defer wg.Done()
					body(ctx)
					return nil
				})
				if err != nil {
					wg.Done() // closed before it was accepted
				}
			}()
		}
		for range r.IntN(6) {
			go p.Go(context.Background(), func(context.Context) error { runtime.Gosched(); return nil })
		}
		for range r.IntN(20) {
			runtime.Gosched()
		}
		if r.IntN(2) == 0 {
			time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
		}
		if r.IntN(3) == 0 {
			// A deadline that may expire: Close cancels the Maps' items.
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(500))*time.Microsecond)
			p.Close(ctx)
			cancel()
			close(block)
		} else {
			d := time.Duration(r.IntN(300)) * time.Microsecond
			go func() { time.Sleep(d); close(block) }()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if _, err := p.Close(ctx); err != nil {
				t.Fatalf("%s: Close during Maps: %v", what, err)
			}
			cancel()
		}
		within(t, 10*time.Second, what+": Maps end", wg.Wait)
		closeEmpty(t, p, what)
		if running.Load() != 0 {
			t.Fatalf("%s: fn running after Close", what)
		}
		close(bad)
		for b := range bad {
			t.Fatalf("%s: %s", what, b)
		}
	}
}
