package adapt_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ration-run/ration/internal/adapt"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner/event"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sizes records every Resize.
type sizes struct {
	mu  sync.Mutex
	got []int
	why []string
}

func (s *sizes) Resize(n int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, n)
	s.why = append(s.why, reason)
}

func (s *sizes) list() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

var (
	oomRecreated = event.Event{Kind: event.PoolRecreated, Cause: event.CauseOOM}
	success      = event.Event{Kind: event.JobFinished, Outcome: event.Succeeded}
	failure      = event.Event{Kind: event.JobFinished, Outcome: event.Failed}
)

func feed(c *adapt.Controller, e event.Event, n int) {
	for range n {
		c.Observe(e)
	}
}

func TestHalveAndGrowBack(t *testing.T) {
	var s sizes
	c := adapt.New(&s, adapt.Config{Limit: 8, GrowAfter: 3})
	c.Observe(oomRecreated) // 8 -> 4, ceiling 7
	if got := c.Size(); got != 4 {
		t.Fatalf("after OOM: %d, want 4", got)
	}
	feed(c, success, 2)
	c.Observe(failure) // a failure ends the run of successes
	feed(c, success, 2)
	if got := c.Size(); got != 4 {
		t.Fatalf("grew without a full run of successes: %d", got)
	}
	feed(c, success, 1) // 3 in a row
	if got := c.Size(); got != 5 {
		t.Fatalf("after a run: %d, want 5", got)
	}
	feed(c, success, 3*10)
	if got := c.Size(); got != 7 {
		t.Fatalf("after many runs: %d, want 7 (the OOM ceiling, below the 8 that OOMed)", got)
	}
	st := c.Stats()
	if st.OOMReductions != 1 || st.Grows != 3 || st.OOMCeiling != 7 {
		t.Errorf("stats %+v", st)
	}
	// The ceiling is probed after ProbeRuns runs at it; then the cap
	// reaches the limit and is cleared.
	feed(c, success, 3*adapt.ProbeRuns)
	if got := c.Size(); got != 8 {
		t.Fatalf("after probing: %d, want 8", got)
	}
	if st := c.Stats(); st.OOMCap != 0 || st.OOMCeiling != 0 {
		t.Errorf("cap and ceiling should be cleared at the limit: %+v", st)
	}
	want := []int{4, 5, 6, 7, 8}
	if got := s.list(); !slices.Equal(got, want) {
		t.Errorf("Resize calls %v, want %v", got, want)
	}
}

// TestWorkerBreakEndsRun: a worker that breaks on a task ends the run of
// successes (the task is re-dispatched inside one attempt, so no
// JobRetried tells of it); one that breaks idle does not.
func TestWorkerBreakEndsRun(t *testing.T) {
	var s sizes
	c := adapt.New(&s, adapt.Config{Limit: 8, GrowAfter: 3})
	c.Observe(oomRecreated) // 8 -> 4
	feed(c, success, 2)
	c.Observe(event.Event{Kind: event.WorkerBroken, Seq: 7, Cause: event.CauseSignal})
	feed(c, success, 2)
	if got := c.Size(); got != 4 {
		t.Fatalf("grew across a worker's break on a task: %d", got)
	}
	c.Observe(event.Event{Kind: event.WorkerBroken, Cause: event.CauseExit}) // idle
	feed(c, success, 1)
	if got := c.Size(); got != 5 {
		t.Fatalf("after 3 successes around an idle break: %d, want 5", got)
	}
}

func TestConvergesBetweenFitAndOOM(t *testing.T) {
	// Memory fits 2 but not 3: OOM at 4 and at 3, then it stays at 2.
	var s sizes
	c := adapt.New(&s, adapt.Config{Limit: 4, GrowAfter: 2})
	c.Observe(oomRecreated) // 4 -> 2, ceiling 3
	feed(c, success, 2)     // -> 3
	c.Observe(oomRecreated) // 3 -> 1, ceiling 2
	feed(c, success, 2*(adapt.ProbeRuns-1)+2)
	if got := c.Size(); got != 2 {
		t.Errorf("size %d, want 2", got)
	}
	if got, want := s.list(), []int{2, 3, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("Resize calls %v, want %v", got, want)
	}
	if st := c.Stats(); !strings.Contains(st.Reason, "grew back to 2") {
		t.Errorf("reason %q", st.Reason)
	}
}

func TestJobOOMRule(t *testing.T) {
	retriedOOM := event.Event{Kind: event.JobRetried, Cause: event.CauseOOM}
	brokenOOM := event.Event{Kind: event.WorkerBroken, Cause: event.CauseOOM}

	var s sizes
	pool := adapt.New(&s, adapt.Config{Limit: 4})
	pool.Observe(retriedOOM)
	pool.Observe(brokenOOM)
	if got := pool.Size(); got != 4 {
		t.Errorf("a worker pool halved on a single job's OOM: %d", got)
	}
	perJob := adapt.New(&s, adapt.Config{Limit: 4, HalveOnJobOOM: true})
	perJob.Observe(retriedOOM)
	if got := perJob.Size(); got != 2 {
		t.Errorf("one-process-per-job: %d after an OOM retry, want 2", got)
	}
	perJob.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Failed, Cause: event.CauseOOM})
	if got := perJob.Size(); got != 1 {
		t.Errorf("one-process-per-job: %d after an OOM failure, want 1", got)
	}
	perJob.Observe(retriedOOM)
	if got := perJob.Size(); got != 1 {
		t.Errorf("never below 1: %d", got)
	}
	// A job killed while no other job ran does not fit at any size: its
	// kills halve nothing, and its peak is no sample.
	alone := adapt.New(&s, adapt.Config{Limit: 4, HalveOnJobOOM: true, LearnMemory: true, MemoryLimit: 200 << 20, MinSamples: 1})
	alone.Observe(event.Event{Kind: event.JobRetried, Cause: event.CauseOOM, Alone: true})
	alone.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Failed, Cause: event.CauseOOM, Alone: true, PeakRSS: 199 << 20})
	if st := alone.Stats(); st.Size != 4 || st.OOMReductions != 0 || st.Samples != 0 {
		t.Errorf("OOM kills of a job running alone: size %d, %d halvings, %d samples; want 4, 0, 0", st.Size, st.OOMReductions, st.Samples)
	}
}

func TestSetLimit(t *testing.T) {
	var s sizes
	c := adapt.New(&s, adapt.Config{Limit: 4, GrowAfter: 1})
	c.SetLimit(1, "quota 0.5")
	c.SetLimit(1, "again") // no change, no call
	c.SetLimit(0, "zero")  // means 1
	c.Observe(oomRecreated)
	if got := c.Size(); got != 1 {
		t.Fatalf("size %d, want 1", got)
	}
	c.SetLimit(6, "quota 3")
	if got := c.Size(); got != 1 {
		t.Fatalf("the OOM cap of 1 must still hold after the limit grew: %d", got)
	}
	feed(c, success, 10)
	if got := c.Size(); got != 6 {
		t.Fatalf("size %d, want 6: a new limit forgets the OOM ceiling", got)
	}
	if got, want := s.list(), []int{1, 2, 3, 4, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("Resize calls %v, want %v", got, want)
	}
	if s.why[0] != "quota 0.5" {
		t.Errorf("reason %q", s.why[0])
	}
}

func TestLearnMemory(t *testing.T) {
	const mib = 1 << 20
	var s sizes
	c := adapt.New(&s, adapt.Config{Limit: 8, LearnMemory: true, MemoryLimit: 1000 * mib, MinSamples: 5})
	peak := func(rss int64) event.Event {
		return event.Event{Kind: event.JobFinished, Outcome: event.Succeeded, PeakRSS: rss}
	}
	for range 4 {
		c.Observe(peak(200 * mib))
	}
	if got := c.Size(); got != 8 {
		t.Fatalf("capped before MinSamples: %d", got)
	}
	c.Observe(peak(200 * mib))
	// 0.9 x 1000 / 200 = 4.5 -> 4
	if got := c.Size(); got != 4 {
		t.Fatalf("size %d, want 4", got)
	}
	// p95: one outlier among 20 does not move it; two do.
	for range 14 {
		c.Observe(peak(100 * mib))
	}
	c.Observe(peak(450 * mib))
	if st := c.Stats(); st.LearnedMemPerJob != 200*mib || st.Samples != 20 || c.Size() != 4 {
		t.Errorf("stats %+v, size %d: want p95 200 MiB over 20 samples, 4 jobs", st, c.Size())
	}
	c.Observe(peak(450 * mib))
	if st := c.Stats(); st.LearnedMemPerJob != 450*mib || c.Size() != 2 {
		t.Errorf("stats %+v, size %d: want p95 450 MiB, 2 jobs", st, c.Size())
	}
	if st := c.Stats(); !strings.Contains(st.Reason, "learned p95 peak RSS") {
		t.Errorf("reason %q", st.Reason)
	}
	c.SetMemoryLimit(100 * mib) // even one job does not fit: never below 1
	if got := c.Size(); got != 1 {
		t.Errorf("size %d, want 1", got)
	}
	c.SetMemoryLimit(0) // unknown: no memory cap
	if got := c.Size(); got != 8 {
		t.Errorf("size %d, want 8", got)
	}
	// Without LearnMemory samples are kept for the report but do not cap.
	off := adapt.New(&s, adapt.Config{Limit: 8, MemoryLimit: 1000 * mib})
	for range 10 {
		off.Observe(peak(900 * mib))
	}
	if off.Size() != 8 || off.Stats().LearnedMemPerJob != 0 {
		t.Errorf("without LearnMemory: size %d, stats %+v", off.Size(), off.Stats())
	}
}

// TestConcurrentApply: many goroutines change bounds while Resize calls
// back into the Controller. The last size applied is the wanted one.
func TestConcurrentApply(t *testing.T) {
	var (
		mu   sync.Mutex
		last int
		c    *adapt.Controller
	)
	c = adapt.New(adapt.ResizeFunc(func(n int, _ string) {
		_ = c.Stats() // calling back must not deadlock
		mu.Lock()
		last = n
		mu.Unlock()
	}), adapt.Config{Limit: 16, GrowAfter: 1})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				switch (g + i) % 5 {
				case 0:
					c.Observe(oomRecreated)
				case 1:
					c.SetLimit(1+(g*i)%16, "test")
				default:
					c.Observe(success)
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if want := c.Size(); last != want && !(last == 0 && want == 16) {
		t.Errorf("last Resize %d, but the Controller wants %d", last, want)
	}
	if st := c.Stats(); st.Size != c.Size() {
		t.Errorf("applied %d, wanted %d", st.Size, c.Size())
	}
}

func TestWatch(t *testing.T) {
	var s sizes
	c := adapt.New(&s, adapt.Config{Limit: 4, LearnMemory: true})
	mem := func(n int64) *int64 { return &n }
	steps := []limits.Decision{
		{Jobs: 4, Reason: "jobs=4", MemoryLimitBytes: mem(1 << 30)},
		{Jobs: 4, Reason: "jobs=4", MemoryLimitBytes: mem(1 << 30)},
		{Jobs: 1, Reason: "jobs=1: quota 0.5", MemoryLimitBytes: mem(1 << 30)},
		{},
		{Jobs: 4, Reason: "jobs=4", HostMemoryBytes: 8 << 30},
	}
	var i int
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("done")
	decide := func(context.Context) (limits.Decision, error) {
		defer func() { i++ }()
		switch {
		case i == 3:
			return limits.Decision{}, errors.New("cgroup unreadable") // skipped
		case i >= len(steps):
			cancel(stop)
			return steps[len(steps)-1], nil
		}
		return steps[i], nil
	}
	err := adapt.Watch(ctx, c, time.Millisecond, decide)
	if !errors.Is(err, stop) {
		t.Errorf("Watch returned %v, want the context's cause", err)
	}
	if got, want := s.list(), []int{1, 4}; !slices.Equal(got, want) {
		t.Errorf("Resize calls %v, want %v", got, want)
	}
	if !strings.Contains(s.why[0], "limits changed: jobs=1: quota 0.5") {
		t.Errorf("reason %q", s.why[0])
	}
	if st := c.Stats(); st.MemoryLimit != 8<<30 {
		t.Errorf("memory limit %d, want the host's 8 GiB once the cgroup limit went away", st.MemoryLimit)
	}
}

func TestCgroupDecider(t *testing.T) {
	d, err := adapt.CgroupDecider(0, "", 0)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Jobs < 1 || d.Reason == "" {
		t.Errorf("decision %+v", d)
	}
	if _, err := adapt.CgroupDecider(0, "x", 0)(context.Background()); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("bad -j: %v, want an error quoting the value", err)
	}
	if _, err := adapt.CgroupDecider(1<<30, "", 0)(context.Background()); err == nil {
		t.Error("a missing process gave no error")
	}
}

// The one-process-per-job runner halves on every OOM-killed job and grows
// back after runs of successes.
func ExampleController() {
	c := adapt.New(adapt.ResizeFunc(func(n int, reason string) {
		fmt.Printf("resize to %d: %s\n", n, reason)
	}), adapt.Config{Limit: 4, GrowAfter: 2, HalveOnJobOOM: true})

	c.Observe(event.Event{Kind: event.JobRetried, Cause: event.CauseOOM})
	for range 2 {
		c.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Succeeded})
	}
	fmt.Println("size:", c.Size())
	// Output:
	// resize to 2: a job was OOM-killed at 4 jobs: halved to 2 (will grow back to at most 3)
	// resize to 3: 2 successes in a row: grew back to 3
	// size: 3
}

// TestSideBySideOOMHalvesOnce: jobs that ran together at 4 and were
// OOM-killed one after the other halve once; an attempt that started after
// the halving and is OOM-killed too halves again.
func TestSideBySideOOMHalvesOnce(t *testing.T) {
	// The fake clock of a synctest bubble: the sleeps only order the
	// times, and take no time.
	synctest.Test(t, testSideBySideOOMHalvesOnce)
}

func testSideBySideOOMHalvesOnce(t *testing.T) {
	var s sizes
	c := adapt.New(&s, adapt.Config{Limit: 4, HalveOnJobOOM: true})
	start := time.Now()
	time.Sleep(5 * time.Millisecond)
	oom := func(kind event.Kind) event.Event {
		now := time.Now()
		return event.Event{Kind: kind, Cause: event.CauseOOM, Outcome: event.Failed, Time: now, Duration: now.Sub(start)}
	}
	c.Observe(oom(event.JobRetried))
	c.Observe(oom(event.JobRetried))
	c.Observe(oom(event.JobFinished))
	if got := c.Size(); got != 2 {
		t.Fatalf("size %d after three OOM kills of jobs that ran together at 4, want 2 (%v)", got, s.list())
	}
	time.Sleep(5 * time.Millisecond)
	start = time.Now() // a retry that started after the halving
	time.Sleep(5 * time.Millisecond)
	c.Observe(oom(event.JobRetried))
	if got := c.Size(); got != 1 {
		t.Fatalf("size %d after an OOM kill at 2, want 1 (%v)", got, s.list())
	}
	if st := c.Stats(); st.OOMReductions != 2 {
		t.Errorf("%d reductions, want 2", st.OOMReductions)
	}
}

func ExampleStats_String() {
	c := adapt.New(adapt.ResizeFunc(func(int, string) {}), adapt.Config{Limit: 4, HalveOnJobOOM: true})
	c.Observe(event.Event{Kind: event.JobRetried, Cause: event.CauseOOM})
	fmt.Println(c.Stats())
	// Output:
	// concurrency 2 (limit 4; 1 OOM halving; 1 change): a job was OOM-killed at 4 jobs: halved to 2 (will grow back to at most 3)
}
