package pool_test

// Stress tests of the pool's lifecycle: Go, TryGo, Group, Wait, Resize and
// Close racing each other, with hooks that call back into the pool and
// tasks that panic, fail, nest or call runtime.Goexit. Each round is a small
// random scenario (seeded by its number, so a failing round replays) whose
// invariants are checked when it ends; deadlines only guard against hangs.

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

// Outcome of a submission, as seen by its submitter.
const (
	subAccepted int32 = 1 + iota // Go returned nil, TryGo true
	subRejected                  // Go returned an error, TryGo false
	subGroup                     // Group.Go: accepted or not, not known
)

// lifeRound tracks the tasks of one round: how often each ran, and what its
// submission returned.
type lifeRound struct {
	runs, sub [1024]atomic.Int32
	next      atomic.Int64
	cur, max  atomic.Int64 // tasks on workers (not inline) at once
	maxSize   atomic.Int64 // largest size set during the round
}

// id returns a new task id, or -1 once the round has used them all.
func (r *lifeRound) id() int {
	if id := r.next.Add(1) - 1; id < int64(len(r.runs)) {
		return int(id)
	}
	return -1
}

// task returns a task that counts its run and then does what kind says.
func (r *lifeRound) task(id, kind int, p *pool.Pool) func(context.Context) error {
	return func(ctx context.Context) error {
		r.runs[id].Add(1)
		switch kind {
		case 1:
			runtime.Gosched()
		case 2:
			time.Sleep(time.Duration(id%7) * 20 * time.Microsecond)
		case 3:
			panic("stress")
		case 4:
			return errStress
		case 5: // nested submissions with the task's context
			for range 3 {
				r.submitGo(ctx, p, 1)
			}
		case 6:
			runtime.Goexit()
		}
		return nil
	}
}

var errStress = errors.New("stress")

// submitGo submits a task with Go and records the outcome.
func (r *lifeRound) submitGo(ctx context.Context, p *pool.Pool, kind int) error {
	id := r.id()
	if id < 0 {
		return nil
	}
	err := p.Go(ctx, r.task(id, kind, p))
	if err == nil {
		r.sub[id].Store(subAccepted)
	} else {
		r.sub[id].Store(subRejected)
	}
	return err
}

// submitTry submits a task with TryGo and records the outcome.
func (r *lifeRound) submitTry(p *pool.Pool, kind int) {
	id := r.id()
	if id < 0 {
		return
	}
	if p.TryGo(r.task(id, kind, p)) {
		r.sub[id].Store(subAccepted)
	} else {
		r.sub[id].Store(subRejected)
	}
}

func (r *lifeRound) resize(p *pool.Pool, n int) {
	for {
		m := r.maxSize.Load()
		if int64(n) <= m || r.maxSize.CompareAndSwap(m, int64(n)) {
			break
		}
	}
	p.Resize(n)
}

// TestStressLifecycle: whatever races with what (submitters, TryGo,
// groups, nested Go, hooks calling Go/TryGo/Resize, Resize up and down,
// Wait, one or two Close calls, one with a short deadline), every accepted
// task runs exactly once and no rejected one runs; a group whose Wait
// returned nil ran all its tasks; Close returns nil (given time) and leaves
// no worker and nothing counted busy, queued or waiting; after Wait with
// no submitter left, Stats shows nothing busy and TryGo succeeds; tasks on
// workers never outnumber the largest size set. Tasks that call Goexit run
// in rounds of every kind, closing concurrently too (their worker's
// replacement is exercised by growing, shrinking, hooks and Close, and a
// submitter that rescues one from a closed pool's queue must survive it).
func TestStressLifecycle(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	for round := range rounds {
		within(t, 30*time.Second, "round", func() { lifeRoundRun(t, round) })
		if t.Failed() {
			t.Fatalf("round %d failed", round)
		}
	}
}

func lifeRoundRun(t *testing.T, round int) {
	rng := rand.New(rand.NewPCG(uint64(round), 1))
	r := &lifeRound{}
	size := 1 + rng.IntN(4)
	r.maxSize.Store(int64(size))
	closeMode := rng.IntN(4) // 0 after Wait, 1 concurrent, 2 two concurrent, 3 short deadline and long
	goexit := rng.IntN(2) == 0
	hooks := rng.IntN(2) == 0
	callBack := rng.IntN(3) == 0
	var p *pool.Pool
	var opts []pool.Option
	var finishes, statsCalls atomic.Int64
	if hooks {
		opts = append(opts,
			pool.OnStart(func(ctx context.Context, ti pool.TaskInfo) {
				if !ti.Inline {
					c := r.cur.Add(1)
					for m := r.max.Load(); c > m && !r.max.CompareAndSwap(m, c); m = r.max.Load() {
					}
				}
			}),
			pool.OnFinish(func(ctx context.Context, ti pool.TaskInfo) {
				if !ti.Inline {
					r.cur.Add(-1)
				}
				if callBack && finishes.Add(1)%7 == 0 {
					r.submitTry(p, 0)
					r.submitGo(ctx, p, 0)
				}
			}),
			pool.OnStats(time.Duration(rng.IntN(50))*time.Microsecond, func(ctx context.Context, s pool.Stats) {
				if s.Busy < 0 || s.Queued < 0 || s.Waiting < 0 {
					t.Errorf("round %d: negative stats in a hook: %+v", round, s)
				}
				if n := statsCalls.Add(1); callBack && n%5 == 0 {
					r.resize(p, 1+int(n/5)%5)
				}
			}),
		)
	}
	p = pool.New(size, opts...)

	type groupResult struct {
		ids []int
		err error
	}
	var (
		wg      sync.WaitGroup
		groupMu sync.Mutex
		groups  []groupResult
	)
	for s := range 1 + rng.IntN(4) {
		srng := rand.New(rand.NewPCG(uint64(round), uint64(s)+100))
		wg.Go(func() {
			mode := srng.IntN(4) // 0, 1: mostly Go; 2: TryGo; 3: a Group
			var g *pool.Group
			var gids []int
			if mode == 3 {
				g, _ = p.Group(context.Background())
			}
			for range 1 + srng.IntN(30) {
				kind := srng.IntN(6)
				if goexit && srng.IntN(5) == 0 {
					kind = 6
				}
				switch {
				case g != nil:
					if kind >= 3 && kind != 5 {
						kind = 0 // group tasks succeed: Wait nil means all ran
					}
					id := r.id()
					if id < 0 {
						break
					}
					gids = append(gids, id)
					r.sub[id].Store(subGroup)
					if srng.IntN(3) > 0 {
						g.Go(r.task(id, kind, p))
					} else if !g.TryGo(r.task(id, kind, p)) {
						r.sub[id].Store(subRejected)
					}
				case mode == 2 || srng.IntN(4) == 0:
					r.submitTry(p, kind)
				default:
					if err := r.submitGo(context.Background(), p, kind); err != nil && !errors.Is(err, pool.ErrClosed) {
						t.Errorf("round %d: Go = %v", round, err)
					}
				}
				if srng.IntN(8) == 0 {
					runtime.Gosched()
				}
			}
			if g != nil {
				err := g.Wait()
				groupMu.Lock()
				groups = append(groups, groupResult{gids, err})
				groupMu.Unlock()
			}
			if srng.IntN(3) == 0 {
				_ = p.Wait() // concurrently with other submitters
			}
		})
	}
	if rng.IntN(3) > 0 {
		wg.Go(func() {
			rrng := rand.New(rand.NewPCG(uint64(round), 99))
			for range 1 + rrng.IntN(10) {
				r.resize(p, 1+rrng.IntN(6))
				if rrng.IntN(2) == 0 {
					runtime.Gosched()
				}
			}
		})
	}

	closeErrs := make(chan error, 2)
	closeWithin := func(d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_, err := p.Close(ctx)
		closeErrs <- err
	}
	closes := 1
	switch closeMode {
	case 0:
		wg.Wait()
		if err := p.Wait(); err != nil && !errors.Is(err, errStress) && !errors.Is(err, pool.ErrGoexit) {
			var pe *pool.PanicError
			if !errors.As(err, &pe) {
				t.Errorf("round %d: Wait = %v", round, err)
			}
		}
		if s := p.Stats(); s.Busy != 0 || s.Queued != 0 || s.Waiting != 0 {
			t.Errorf("round %d: stats after Wait: %+v", round, s)
		}
		if !p.TryGo(nop) {
			t.Errorf("round %d: TryGo on an idle pool = false; stats %+v", round, p.Stats())
		}
		go closeWithin(10 * time.Second)
	case 1, 2:
		for range rng.IntN(20) {
			runtime.Gosched()
		}
		closes = closeMode
		for range closes {
			go closeWithin(10 * time.Second)
		}
	case 3:
		for range rng.IntN(20) {
			runtime.Gosched()
		}
		go closeWithin(time.Duration(rng.IntN(100)) * time.Microsecond)
		go closeWithin(10 * time.Second)
		closes = 2
	}
	wg.Wait()
	ok := 0
	for range closes {
		switch err := <-closeErrs; {
		case err == nil:
			ok++
		case !errors.Is(err, context.DeadlineExceeded):
			t.Errorf("round %d: Close = %v", round, err)
		}
	}
	if want := closes - closeMode/3; ok < want { // the short deadline may pass
		t.Errorf("round %d: %d Close calls returned nil, want %d; stats %+v", round, ok, want, p.Stats())
	}
	closeEmpty(t, p, fmt.Sprintf("round %d: last Close", round))

	for id := range min(int(r.next.Load()), len(r.runs)) {
		n := r.runs[id].Load()
		switch r.sub[id].Load() {
		case subAccepted:
			if n != 1 {
				t.Errorf("round %d: accepted task %d ran %d times", round, id, n)
			}
		case subRejected:
			if n != 0 {
				t.Errorf("round %d: rejected task %d ran %d times", round, id, n)
			}
		case subGroup:
			if n > 1 {
				t.Errorf("round %d: group task %d ran %d times", round, id, n)
			}
		}
	}
	for _, g := range groups {
		for _, id := range g.ids {
			if n := r.runs[id].Load(); g.err == nil && r.sub[id].Load() == subGroup && n != 1 {
				t.Errorf("round %d: group task %d ran %d times, and the group's Wait returned nil", round, id, n)
			}
		}
	}
	if hooks && !goexit && r.max.Load() > r.maxSize.Load() {
		t.Errorf("round %d: %d tasks on workers at once, largest size %d", round, r.max.Load(), r.maxSize.Load())
	}
}

// TestStressGrowStartsBlocked: growing lets up to n tasks run at once now.
// With every worker busy (after a shrink, in some rounds), the queue full
// and k submitters blocked, Resize to the total starts every task without
// any of them finishing, and the blocked Go calls return nil.
func TestStressGrowStartsBlocked(t *testing.T) {
	for round := range 200 {
		rng := rand.New(rand.NewPCG(uint64(round), 3))
		size, k := 1+rng.IntN(3), rng.IntN(4)
		p := pool.New(size)
		release := make(chan struct{})
		var started atomic.Int64
		task := func(context.Context) error { started.Add(1); <-release; return nil }
		for range size {
			if err := p.Go(context.Background(), task); err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(2) == 0 {
			p.Resize(1)
		}
		for range pool.QueueSlack {
			if err := p.Go(context.Background(), task); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for range k {
			wg.Go(func() {
				if err := p.Go(context.Background(), task); err != nil {
					t.Errorf("round %d: blocked Go = %v", round, err)
				}
			})
		}
		total := size + pool.QueueSlack + k
		within(t, 10*time.Second, "submitters blocking", func() {
			for p.Stats().Waiting < pool.QueueSlack+k {
				runtime.Gosched()
			}
		})
		if rng.IntN(2) == 0 {
			p.Resize(total - 1)
		}
		p.Resize(total)
		within(t, 10*time.Second, "grown pool starting every task", func() {
			for started.Load() < int64(total) {
				time.Sleep(50 * time.Microsecond)
			}
		})
		wg.Wait()
		if s := p.Stats(); s.Busy != total || s.Queued != 0 || s.Waiting != 0 {
			t.Errorf("round %d: stats with %d tasks running: %+v", round, total, s)
		}
		close(release)
		closePool(t, p, fmt.Sprintf("round %d", round))
		if t.Failed() {
			t.Fatalf("round %d (size %d, %d blocked) failed", round, size, k)
		}
	}
}
