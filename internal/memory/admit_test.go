package memory

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const mib = 1 << 20

// clock is a manual clock for Config.Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestAdmitRules(t *testing.T) {
	lim := func(ws int64) Reading { return Reading{Limit: 200 * mib, WorkingSet: ws} }
	tests := []struct {
		name     string
		peaks    []int64 // finished peaks fed first (none: slow start)
		settled  bool    // the slow-start window has been full for Settle
		req      Request
		start    bool
		rule     Rule
		bound    bool
		memJobs  int
		perJob   int64
		headroom int64
		reason   string // substring
	}{
		{name: "nothing runs: start, even with no room", req: Request{Reading: lim(199 * mib), Limit: 4},
			start: true, rule: RuleAlone, headroom: -9 * mib},
		{name: "nothing runs under pressure: start", req: Request{Reading: Reading{Limit: 200 * mib, Pressure: true, PressureSome10: 90}, Limit: 4},
			start: true, rule: RuleAlone, headroom: 190 * mib},
		{name: "CPU limit reached", peaks: []int64{10 * mib}, req: Request{Reading: lim(20 * mib), Running: []int64{5 * mib, 5 * mib}, Limit: 2},
			rule: RuleCPU, memJobs: 18, perJob: 10 * mib, headroom: 180 * mib, reason: "CPU limit is 2"},
		{name: "pressure holds", peaks: []int64{10 * mib}, req: Request{Reading: Reading{Limit: 200 * mib, WorkingSet: 20 * mib, Pressure: true, PressureSome10: 25.5},
			Running: []int64{10 * mib}, Limit: 8}, rule: RulePressure, bound: true, memJobs: 18, perJob: 10 * mib, headroom: 180 * mib, reason: "some avg10 25.50% > 20%"},
		{name: "pressure at the threshold does not hold", peaks: []int64{10 * mib}, req: Request{Reading: Reading{Limit: 200 * mib, WorkingSet: 20 * mib, Pressure: true, PressureSome10: 20},
			Running: []int64{10 * mib}, Limit: 8}, start: true, rule: RuleFits, memJobs: 18, perJob: 10 * mib, headroom: 180 * mib},
		{name: "no memory limit", req: Request{Reading: Reading{WorkingSet: 1 << 40}, Running: []int64{1 << 30}, Limit: 8},
			start: true, rule: RuleNoLimit},
		{name: "slow start: window of 1 is full", req: Request{Reading: lim(90 * mib), Running: []int64{85 * mib}, Limit: 4},
			rule: RuleSlowStart, bound: true, memJobs: 2, perJob: 85 * mib, headroom: 185 * mib, reason: "slow start: 1 job runs"},
		{name: "slow start: settled and low: window 2, and it fits", settled: true, req: Request{Reading: lim(90 * mib), Running: []int64{85 * mib}, Limit: 4},
			start: true, rule: RuleFits, bound: true, memJobs: 2, perJob: 85 * mib, headroom: 185 * mib},
		{name: "slow start: settled but high: window stays", settled: true, req: Request{Reading: lim(150 * mib), Running: []int64{60 * mib}, Limit: 4},
			rule: RuleSlowStart, bound: true, memJobs: 1, perJob: 60 * mib, headroom: 100 * mib},
		{name: "slow start: settled, low, but the running job's RSS says no room", settled: true, req: Request{Reading: lim(120 * mib), Running: []int64{110 * mib}, Limit: 4},
			rule: RuleHeadroom, bound: true, memJobs: 1, perJob: 110 * mib, headroom: 180 * mib},
		// 190 MiB usable, 10 MiB not the jobs' (ration), 85 MiB peaks: 2 fit.
		{name: "headroom: a second job fits", peaks: []int64{85 * mib}, req: Request{Reading: lim(95 * mib), Running: []int64{85 * mib}, Limit: 4},
			start: true, rule: RuleFits, bound: true, memJobs: 2, perJob: 85 * mib, headroom: 180 * mib},
		{name: "headroom: a third does not", peaks: []int64{85 * mib}, req: Request{Reading: lim(180 * mib), Running: []int64{85 * mib, 85 * mib}, Limit: 4},
			rule: RuleHeadroom, bound: true, memJobs: 2, perJob: 85 * mib, headroom: 180 * mib, reason: "holds 2 of 85 MiB, and 2 run"},
		// A job just started has 5 MiB resident but will reach its peak:
		// its share stays reserved.
		{name: "headroom: a growing job keeps its share", peaks: []int64{85 * mib}, req: Request{Reading: lim(100 * mib), Running: []int64{85 * mib, 5 * mib}, Limit: 4},
			rule: RuleHeadroom, bound: true, memJobs: 2, perJob: 85 * mib, headroom: 180 * mib},
		{name: "headroom: unknown RSS counts at the peak and in the working set", peaks: []int64{40 * mib}, req: Request{Reading: lim(90 * mib), Running: []int64{0, 0}, Limit: 8},
			rule: RuleHeadroom, bound: true, memJobs: 2, perJob: 40 * mib, headroom: 100 * mib},
		{name: "running RSS above the peaks raises the estimate", peaks: []int64{30 * mib}, req: Request{Reading: lim(110 * mib), Running: []int64{100 * mib}, Limit: 8},
			rule: RuleHeadroom, bound: true, memJobs: 1, perJob: 100 * mib, headroom: 180 * mib},
		{name: "page cache does not count: working set is what is passed", peaks: []int64{50 * mib}, req: Request{Reading: lim(60 * mib), Running: []int64{50 * mib}, Limit: 3},
			start: true, rule: RuleFits, memJobs: 3, perJob: 50 * mib, headroom: 180 * mib},
		{name: "memory allows more than the CPU: not bound", peaks: []int64{10 * mib}, req: Request{Reading: lim(20 * mib), Running: []int64{10 * mib}, Limit: 4},
			start: true, rule: RuleFits, memJobs: 18, perJob: 10 * mib, headroom: 180 * mib},
		{name: "no CPU bound given", peaks: []int64{85 * mib}, req: Request{Reading: lim(180 * mib), Running: []int64{85 * mib, 85 * mib}},
			rule: RuleHeadroom, bound: true, memJobs: 2, perJob: 85 * mib, headroom: 180 * mib},
		{name: "working set above the limit", peaks: []int64{10 * mib}, req: Request{Reading: lim(300 * mib), Running: []int64{10 * mib}, Limit: 4},
			rule: RuleHeadroom, bound: true, memJobs: 1, perJob: 10 * mib, headroom: -100 * mib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: time.Unix(1e9, 0)}
			g := New(Config{Now: c.now})
			for _, p := range tt.peaks {
				g.Finished(p)
			}
			if tt.settled {
				// The first job started (window 1) a Settle ago.
				if d := g.Admit(Request{Reading: tt.req.Reading, Limit: tt.req.Limit}); !d.Start {
					t.Fatalf("first job: %+v", d)
				}
				c.advance(DefaultSettle)
			}
			d := g.Admit(tt.req)
			if d.Start != tt.start || d.Rule != tt.rule || d.MemoryBound != tt.bound || d.MemoryJobs != tt.memJobs ||
				d.PerJob != tt.perJob || d.Headroom != tt.headroom || !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("Admit = %+v\nwant start %v rule %s bound %v memJobs %d perJob %d MiB headroom %d MiB reason ~%q",
					d, tt.start, tt.rule, tt.bound, tt.memJobs, tt.perJob/mib, tt.headroom/mib, tt.reason)
			}
			if !d.Start && d.RetryAfter != DefaultPoll {
				t.Errorf("RetryAfter = %v, want %v", d.RetryAfter, DefaultPoll)
			}
		})
	}
}

func TestEstimate(t *testing.T) {
	g := New(Config{MinSamples: 3})
	est := func() int64 { return g.Stats().PerJob }
	if est() != 0 || !g.Stats().SlowStart {
		t.Fatalf("fresh gate: %+v", g.Stats())
	}
	g.Finished(0) // unknown: ignored
	g.Finished(-5)
	if g.Stats().Samples != 0 {
		t.Fatal("unknown peaks were sampled")
	}
	g.Finished(50 * mib)
	g.Finished(80 * mib)
	if est() != 80*mib || g.Stats().SlowStart {
		t.Errorf("two samples: max %d MiB, want 80", est()/mib)
	}
	// 100 samples: 99 of 10 MiB and one outlier of 1 GiB; the p95 ignores it.
	g = New(Config{})
	for range 99 {
		g.Finished(10 * mib)
	}
	g.Finished(1 << 30)
	if est() != 10*mib {
		t.Errorf("p95 with one outlier = %d MiB, want 10", est()/mib)
	}
	// The ring keeps the latest 1024.
	for range sampleWindow {
		g.Finished(20 * mib)
	}
	if est() != 20*mib || g.Stats().Samples != sampleWindow {
		t.Errorf("after the window turned over: %d MiB over %d samples", est()/mib, g.Stats().Samples)
	}
}

// TestForget: the peaks of a job that does not fit leave the estimate,
// one sample per value, in a ring that turned over too; with none left,
// slow start holds again.
func TestForget(t *testing.T) {
	g := New(Config{})
	est := func() int64 { return g.Stats().PerJob }
	g.Finished(10 * mib)
	g.Finished(190 * mib)
	g.Finished(10 * mib)
	g.Finished(195 * mib)
	g.Forget(190*mib, 195*mib, 7*mib, 0)
	if est() != 10*mib || g.Stats().Samples != 2 {
		t.Errorf("after Forget: %d MiB over %d samples, want 10 over 2", est()/mib, g.Stats().Samples)
	}
	g.Forget(10*mib, 10*mib)
	if !g.Stats().SlowStart {
		t.Errorf("no peak left, but no slow start: %+v", g.Stats())
	}
	req := Request{Reading: Reading{Limit: 200 * mib, WorkingSet: 20 * mib}, Running: []int64{10 * mib}, Limit: 4}
	if d := g.Admit(req); d.Start || d.Rule != RuleSlowStart {
		t.Errorf("no peak left: %s (%s), want a slow-start hold", d.Rule, d.Reason)
	}
	// A full ring keeps the latest 1024 in order after a removal.
	g = New(Config{})
	for range sampleWindow + 10 {
		g.Finished(10 * mib)
	}
	g.Finished(500 * mib)
	g.Forget(500 * mib)
	for range 3 {
		g.Finished(20 * mib)
	}
	if est() != 10*mib || g.Stats().Samples != sampleWindow-1+3-2 {
		t.Errorf("after Forget in a full ring: %d MiB over %d samples", est()/mib, g.Stats().Samples)
	}
}

// TestOutgrew: a peak outgrows the memory for jobs that the latest
// decision with a limit saw (200 MiB less the 5% margin less 20 MiB of
// working set that is not the running job's 10 MiB: 170 MiB), and
// nothing does before a limit is known.
func TestOutgrew(t *testing.T) {
	g := New(Config{})
	if g.Outgrew(1 << 40) {
		t.Error("a peak outgrew the memory for jobs before any decision")
	}
	g.Admit(Request{Reading: Reading{Limit: 200 * mib, WorkingSet: 30 * mib}, Running: []int64{10 * mib}, Limit: 4})
	room := int64(200*mib - 200*mib/20 - 20*mib)
	for _, tc := range []struct {
		peak int64
		want bool
	}{{0, false}, {room - 1, false}, {room, true}, {300 * mib, true}} {
		if got := g.Outgrew(tc.peak); got != tc.want {
			t.Errorf("Outgrew(%d) = %v, want %v (memory for jobs %d)", tc.peak, got, tc.want, room)
		}
	}
	g.Admit(Request{Reading: Reading{}, Limit: 4}) // no limit known: the latest figure stays
	if !g.Outgrew(room) {
		t.Error("a decision without a limit forgot the memory for jobs")
	}
}

// TestSlowStart follows a batch of 80 MiB jobs in 1 GiB before any job
// ends: the window starts at 1 and doubles every Settle while the
// working set stays under 75% of the usable memory, and time only passes
// in the bubble.
func TestSlowStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Config{})
		const limit, job, ration = 1 << 30, 80 * mib, 10 * mib
		running := []int64{}
		admit := func() Decision {
			ws := int64(ration)
			for _, r := range running {
				ws += r
			}
			return g.Admit(Request{Reading: Reading{Limit: limit, WorkingSet: ws}, Running: running, Limit: 100})
		}
		startAll := func() int {
			n := 0
			for {
				d := admit()
				if !d.Start {
					if d.Rule != RuleSlowStart && d.Rule != RuleHeadroom {
						t.Fatalf("held by %s: %s", d.Rule, d.Reason)
					}
					return n
				}
				running = append(running, job)
				n++
			}
		}
		var got []int
		for range 5 {
			got = append(got, startAll())
			time.Sleep(DefaultSettle)
		}
		// Window 1, 2, 4, 8: then 8 jobs x 80 MiB + 10 = 650 MiB is still
		// under 75% of the 972.8 MiB usable, so the window becomes 16,
		// but memory holds 12 (962.8 MiB for jobs / 80 MiB).
		want := []int{1, 1, 2, 4, 4}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("jobs started per round = %v, want %v", got, want)
			}
		}
		s := g.Stats()
		if !s.SlowStart || s.BoundDecisions == 0 {
			t.Errorf("stats %+v", s)
		}
		// The first peak ends slow start: the estimate rules alone.
		g.Finished(job)
		if d := admit(); d.Rule == RuleSlowStart {
			t.Errorf("after the first peak: %+v", d)
		}
	})
}

// TestSlowStartWaitsForGrowthToStop: jobs short of CPU (a small CPU
// quota, a busy or emulated machine) grow slowly, so a working set that
// is low after Settle says nothing yet. The window doubles only once the
// working set stopped growing for Settle.
func TestSlowStartWaitsForGrowthToStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Config{})
		const limit = 128 * mib
		ws := int64(10 * mib)
		admit := func(running int) Decision {
			return g.Admit(Request{Reading: Reading{Limit: limit, WorkingSet: ws}, Running: make([]int64, running), Limit: 4})
		}
		if d := admit(0); !d.Start {
			t.Fatalf("first job: %s (%s)", d.Rule, d.Reason)
		}
		// The one job grows by 2 MiB every 200 ms for 3 s, far below 75%
		// of the usable memory all along.
		for range 15 {
			time.Sleep(200 * time.Millisecond)
			ws += 2 * mib
			if d := admit(1); d.Start {
				t.Fatalf("at %s working set, still growing: started a second job (%s)", FormatBytes(ws), d.Reason)
			}
		}
		// Then it holds still: after Settle the window is 2.
		for range 4 {
			time.Sleep(200 * time.Millisecond)
			if d := admit(1); d.Start {
				t.Fatalf("started %v after the growth stopped, want %v: %s", 4*200*time.Millisecond, DefaultSettle, d.Reason)
			}
		}
		time.Sleep(DefaultSettle)
		if d := admit(1); !d.Start {
			t.Fatalf("working set still for %v: %s (%s), want a start", DefaultSettle, d.Rule, d.Reason)
		}
	})
}

func TestStatsString(t *testing.T) {
	g := New(Config{})
	if s := g.Stats().String(); s != "memory never bound the jobs" {
		t.Errorf("fresh: %q", s)
	}
	g.Finished(60 * mib)
	g.Admit(Request{Reading: Reading{Limit: 200 * mib, WorkingSet: 10 * mib}, Limit: 2})
	if s := g.Stats().String(); s != "memory never bound the jobs (peak 60 MiB per job over 1 jobs)" {
		t.Errorf("not bound: %q", s)
	}
	// 200 MiB, 10 MiB not the jobs': 180 MiB for 60 MiB jobs = 3 of 8.
	g.Admit(Request{Reading: Reading{Limit: 200 * mib, WorkingSet: 190 * mib}, Running: []int64{60 * mib, 60 * mib, 60 * mib}, Limit: 8})
	if s, want := g.Stats().String(), "memory bound 3 of 8 jobs: 180 MiB headroom / 60 MiB per job (held 1 start)"; s != want {
		t.Errorf("bound:\n got %q\nwant %q", s, want)
	}
	g.Admit(Request{Reading: Reading{Limit: 200 * mib, WorkingSet: 70 * mib, Pressure: true, PressureSome10: 31}, Running: []int64{60 * mib}, Limit: 4})
	if s, want := g.Stats().String(), "memory bound 1 of 4 jobs: memory pressure: PSI some avg10 31.00% > 20%; 1 job runs (held 2 starts)"; s != want {
		t.Errorf("pressure:\n got %q\nwant %q", s, want)
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{Margin: 2, PressureHold: -1}.withDefaults()
	if c.Margin != 0.99 || c.PressureHold != -1 || c.Settle != DefaultSettle || c.OOMAttempts != DefaultOOMAttempts || c.Now == nil {
		t.Errorf("%+v", c)
	}
	// PressureHold < 0 disables the pressure rule.
	g := New(Config{PressureHold: -1})
	g.Finished(mib)
	d := g.Admit(Request{Reading: Reading{Limit: 200 * mib, WorkingSet: 10 * mib, Pressure: true, PressureSome10: 100}, Running: []int64{mib}})
	if !d.Start {
		t.Errorf("pressure rule disabled: %+v", d)
	}
}

// TestConcurrent calls every method from many goroutines: run with -race.
func TestConcurrent(t *testing.T) {
	g := New(Config{})
	var tr Tracker
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				seq := i*1000 + j
				tr.Started(seq, int64(j))
				g.Admit(Request{Reading: Reading{Limit: 200 * mib, WorkingSet: int64(j) * mib}, Running: []int64{mib, 2 * mib}, Limit: 4})
				g.Finished(int64(j+1) * mib)
				_ = g.Stats().String()
				tr.Ended(seq, int64(j+1), End{Signal: 9, GroupGone: true})
			}
		}()
	}
	wg.Wait()
	if s := g.Stats(); s.Starts+s.Holds != 8*200 || s.Samples != sampleWindow {
		t.Errorf("stats %+v", s)
	}
}

func TestFormatBytes(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {100, "100 B"}, {1536, "1.5 KiB"}, {85 * mib, "85 MiB"}, {180 * mib, "180 MiB"}, {3 << 29, "1.5 GiB"}, {-100 * mib, "-100 MiB"}, {-1 << 63, "-8 EiB"}} {
		if got := FormatBytes(tt.n); got != tt.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// TestHoldsCountJobs: a job that asks again after a hold is one hold.
func TestHoldsCountJobs(t *testing.T) {
	g := New(Config{})
	g.Finished(60 * mib)
	req := Request{Reading: Reading{Limit: 100 * mib, WorkingSet: 70 * mib}, Running: []int64{60 * mib}, Limit: 4}
	for i := range 5 {
		req.Again = i > 0
		if d := g.Admit(req); d.Start {
			t.Fatalf("ask %d: started: %+v", i, d)
		}
	}
	if s := g.Stats(); s.Holds != 1 || s.BoundDecisions != 5 {
		t.Errorf("stats %+v: want 1 hold over 5 binding decisions", s)
	}
}
