package memory

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults for the zero values of Config.
const (
	DefaultMargin       = 0.05
	DefaultPressureHold = 20.0
	DefaultSlowStart    = 0.75
	DefaultSettle       = time.Second
	DefaultMinSamples   = 5
	DefaultPoll         = 200 * time.Millisecond
	DefaultOOMAttempts  = 3
	// sampleWindow is how many of the latest peaks the p95 is taken over:
	// recent jobs predict the next ones better, and it bounds memory.
	sampleWindow = 1024
)

// Config configures a Gate. The zero value is usable: every zero field
// takes its default.
type Config struct {
	// Margin is the share of the limit kept free for what is not a job
	// (the runner, page tables, a job's peak above its sampled RSS); 0
	// means DefaultMargin (5%). Values at or above 1 mean 0.99.
	Margin float64
	// PressureHold is the PSI "some avg10" percentage above which no job is
	// added (rule 2); 0 means DefaultPressureHold (20), a negative value
	// disables the rule.
	PressureHold float64
	// SlowStart is the share of the usable memory the working set must
	// stay under for the slow-start window to double; 0 means
	// DefaultSlowStart (0.75).
	SlowStart float64
	// Settle is how long the window must be full and the working set low
	// before the window doubles; 0 means DefaultSettle (1 s).
	Settle time.Duration
	// MinSamples is the number of finished peaks after which the p95 is
	// taken instead of the maximum; 0 means DefaultMinSamples (5).
	MinSamples int
	// Poll is Decision.RetryAfter of a hold: how soon to ask again when no
	// job ends first; 0 means DefaultPoll (200 ms).
	Poll time.Duration
	// OOMAttempts is how many OOM kills of one job make it fail although
	// it never ran alone; 0 means DefaultOOMAttempts (3).
	OOMAttempts int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Margin <= 0 {
		c.Margin = DefaultMargin
	}
	c.Margin = min(c.Margin, 0.99)
	if c.PressureHold == 0 {
		c.PressureHold = DefaultPressureHold
	}
	if c.SlowStart <= 0 {
		c.SlowStart = DefaultSlowStart
	}
	if c.Settle <= 0 {
		c.Settle = DefaultSettle
	}
	if c.MinSamples <= 0 {
		c.MinSamples = DefaultMinSamples
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.OOMAttempts <= 0 {
		c.OOMAttempts = DefaultOOMAttempts
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Reading is the state of the memory cgroup the jobs share, e.g. from
// [FromCgroup]. The zero value means "unknown": no job is held for memory.
type Reading struct {
	// Limit is the tightest memory limit in bytes, 0 when none or unknown.
	Limit int64
	// WorkingSet is the working set (usage minus inactive_file) of the
	// cgroup that sets Limit, in bytes.
	WorkingSet int64
	// Pressure is true when PSI is available; PressureSome10 is then its
	// "some avg10" percentage.
	Pressure       bool
	PressureSome10 float64
}

// Request is one question to [Gate.Admit].
type Request struct {
	// Reading is the memory cgroup now.
	Reading Reading
	// Running holds the current resident memory, in bytes, of each job
	// running now (its process group's, or its main process's); 0 when
	// unknown. len(Running) is the number of running jobs.
	Running []int64
	// Limit is how many jobs the CPU policy allows now (-j, or the
	// container's CPUs, lowered by OOM halvings); 0 means no CPU bound.
	Limit int
	// Again is true when the same job asks again after a hold: a held
	// job asks until it starts, and counts as one hold in Stats.
	Again bool
}

// Rule names the admission rule that decided.
type Rule string

// The rules, in the order they are tried (see the package documentation).
const (
	RuleCPU       Rule = "cpu"        // hold: the CPU policy's limit is reached
	RuleAlone     Rule = "alone"      // start: no job runs
	RulePressure  Rule = "pressure"   // hold: PSI above Config.PressureHold
	RuleNoLimit   Rule = "no-limit"   // start: no memory limit known
	RuleSlowStart Rule = "slow-start" // hold: the slow-start window is full
	RuleHeadroom  Rule = "headroom"   // hold: one more job does not fit
	RuleFits      Rule = "fits"       // start: one more job fits
)

// Decision is [Gate.Admit]'s answer.
type Decision struct {
	// Start says whether to start one more job now. When false, ask again
	// when a job ends or after RetryAfter, whichever comes first.
	Start      bool
	RetryAfter time.Duration
	// Rule is the rule that decided; Reason says why, in words.
	Rule   Rule
	Reason string
	// MemoryBound is true when memory, not the CPU policy, limits the
	// number of jobs now: it held this job, or MemoryJobs < Limit.
	MemoryBound bool
	// MemoryJobs is how many jobs memory allows in all (memory for jobs
	// divided by one job's peak, at least 1); 0 when unknown (no limit, or
	// no estimate yet).
	MemoryJobs int
	// Headroom is the memory for jobs: usable memory less what is not a
	// job's (the working set less the running jobs' RSS); PerJob is the
	// estimate of one job's peak (0: none yet).
	Headroom int64
	PerJob   int64
	// Running and Limit are len(Request.Running) and Request.Limit, for
	// messages.
	Running int
	Limit   int
}

// Gate applies the admission rules and keeps what they learn: the finished
// jobs' peaks and the slow-start window. It is safe for concurrent use.
type Gate struct {
	cfg Config

	mu          sync.Mutex
	samples     []int64 // ring of the latest finished peaks
	next        int
	window      int       // slow-start window; 0 once a peak is known
	windowSince time.Time // when the window last changed or the working set last grew (zero: no job started yet)
	settleWS    int64     // the working set that growth is measured from since windowSince
	holds       int
	starts      int
	bound       Decision // the latest decision in which memory was binding
	boundCount  int
	forJobs     int64 // the latest Decision.Headroom with a limit known (0: none yet)
}

// New returns a Gate for cfg.
func New(cfg Config) *Gate {
	return &Gate{cfg: cfg.withDefaults(), window: 1}
}

// Admit answers whether one more job may start now. It records a Start as
// started (for the slow-start window); the runner must start the job or
// call nothing more for it.
func (g *Gate) Admit(req Request) Decision {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.decideLocked(req, g.cfg.Now())
	if d.Start {
		g.starts++
	} else if !req.Again {
		g.holds++
	}
	if d.MemoryBound {
		g.bound = d
		g.boundCount++
	}
	return d
}

func (g *Gate) decideLocked(req Request, now time.Time) Decision {
	cfg := g.cfg
	n := len(req.Running)
	r := req.Reading
	d := Decision{Running: n, Limit: req.Limit, RetryAfter: cfg.Poll}
	usable, ws := g.memoryLocked(&d, req)
	memHold := func(rule Rule, reason string) Decision {
		d.Rule, d.Reason = rule, reason
		d.MemoryBound = req.Limit <= 0 || n < req.Limit
		return d
	}
	switch {
	case req.Limit > 0 && n >= req.Limit:
		d.Rule, d.Reason = RuleCPU, fmt.Sprintf("%s: the CPU limit is %d", runs(n), req.Limit)
		return d
	case n == 0:
		if g.windowSince.IsZero() {
			g.windowSince, g.settleWS = now, ws
		}
		d.Start = true
		d.Rule, d.Reason = RuleAlone, "no job runs: one job always starts"
		d.MemoryBound = d.MemoryJobs > 0 && req.Limit > 0 && d.MemoryJobs < req.Limit
		return d
	case r.Pressure && cfg.PressureHold > 0 && r.PressureSome10 > cfg.PressureHold:
		return memHold(RulePressure, fmt.Sprintf("memory pressure: PSI some avg10 %.2f%% > %.0f%%; %s", r.PressureSome10, cfg.PressureHold, runs(n)))
	case r.Limit <= 0:
		d.Start = true
		d.Rule, d.Reason = RuleNoLimit, "no memory limit"
		return d
	}
	if g.slowStartHoldsLocked(n, ws, usable, now) {
		return memHold(RuleSlowStart, fmt.Sprintf("slow start: %s and no job has ended yet; working set %s of %s (window doubles after %s under %.0f%%)",
			runs(n), FormatBytes(ws), FormatBytes(usable), cfg.Settle, cfg.SlowStart*100))
	}
	if d.PerJob > 0 && d.Headroom < int64(n+1)*d.PerJob {
		return memHold(RuleHeadroom, fmt.Sprintf("memory: %s for jobs (%s usable less %s not the jobs') holds %d of %s, and %d run",
			FormatBytes(d.Headroom), FormatBytes(usable), FormatBytes(usable-d.Headroom), d.MemoryJobs, FormatBytes(d.PerJob), n))
	}
	d.Start = true
	d.Rule, d.Reason = RuleFits, fmt.Sprintf("fits: %s for jobs holds %d of %s, and %d run", FormatBytes(d.Headroom), d.MemoryJobs, FormatBytes(d.PerJob), n)
	if d.PerJob == 0 {
		d.Reason = fmt.Sprintf("fits: %d run, in the slow-start window of %d", n, g.window)
	}
	d.MemoryBound = d.MemoryJobs > 0 && req.Limit > 0 && d.MemoryJobs < req.Limit
	return d
}

// memoryLocked fills in d's memory figures (PerJob, Headroom,
// MemoryJobs) from req, and returns the usable memory and the working set
// (0 and 0 without a limit).
func (g *Gate) memoryLocked(d *Decision, req Request) (usable, ws int64) {
	r := req.Reading
	if r.Limit <= 0 {
		return 0, 0
	}
	usable = r.Limit - int64(g.cfg.Margin*float64(r.Limit))
	ws = max(r.WorkingSet, 0)
	est := g.estimateLocked(req.Running)
	var rss int64
	for _, x := range req.Running {
		rss += max(x, 0)
	}
	d.PerJob = est
	// What is not a job's (the runner, other processes, page cache in use)
	// stays; the rest is the jobs'. RSS counts shared pages once per
	// process, so it may exceed the working set.
	d.Headroom = usable - max(ws-rss, 0)
	g.forJobs = d.Headroom
	if est > 0 {
		d.MemoryJobs = max(int(d.Headroom/est), 1)
	}
	return usable, ws
}

// slowStartHoldsLocked applies slow start (rule 4) to n running jobs: it
// doubles the window when it was full for Config.Settle with the working
// set low, and reports whether the window is full. Once a peak is known
// it holds nothing.
func (g *Gate) slowStartHoldsLocked(n int, ws, usable int64, now time.Time) bool {
	if g.window <= 0 || len(g.samples) > 0 {
		return false
	}
	if g.windowSince.IsZero() {
		g.windowSince, g.settleWS = now, ws // jobs were started without asking: settle from here
	}
	// A working set still growing (by more than 1/64 of the usable memory
	// since the settling began) means the running jobs have not shown
	// their memory yet: short of CPU (a small CPU quota, a busy or
	// emulated machine) they grow slowly, and a wall clock alone would
	// widen the window before they do. Settling starts again from here.
	switch {
	case ws > g.settleWS+usable/64:
		g.windowSince, g.settleWS = now, ws
	case ws < g.settleWS:
		g.settleWS = ws
	}
	if n >= g.window && now.Sub(g.windowSince) >= g.cfg.Settle && float64(ws) <= g.cfg.SlowStart*float64(usable) {
		g.window *= 2
		g.windowSince, g.settleWS = now, ws
	}
	return n >= g.window
}

func runs(n int) string {
	if n == 1 {
		return "1 job runs"
	}
	return fmt.Sprintf("%d jobs run", n)
}

// estimateLocked is one job's peak: the finished peaks' maximum (fewer than
// MinSamples) or p95, or a running job's current RSS if larger.
func (g *Gate) estimateLocked(running []int64) int64 {
	var est int64
	switch n := len(g.samples); {
	case n == 0:
	case n < g.cfg.MinSamples:
		est = slices.Max(g.samples)
	default:
		est = p95(g.samples)
	}
	for _, x := range running {
		est = max(est, x)
	}
	return est
}

// p95 is the nearest-rank 95th percentile.
func p95(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[max(int(math.Ceil(0.95*float64(len(s))))-1, 0)]
}

// Finished records the peak resident memory of a job attempt that ended
// (an OOM-killed one too: its peak is a lower bound of its need). A peak
// of 0 or less (unknown) is ignored. The first known peak ends slow start.
func (g *Gate) Finished(peakRSS int64) {
	if peakRSS <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.samples) < sampleWindow {
		g.samples = append(g.samples, peakRSS)
	} else {
		g.samples[g.next] = peakRSS
		g.next = (g.next + 1) % sampleWindow
	}
	g.window = 0
}

// Forget removes peaks that Finished recorded, one sample for each value
// (the latest equal one): those of a job that was OOM-killed running
// alone and fails, as it does not fit in the memory limit at all. Its
// peaks, near the whole limit, say nothing of the jobs that can run, and
// as one job's peak they would make every job start alone. When no peak
// is left, slow start begins again, as at the start of the run.
func (g *Gate) Forget(peaks ...int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range peaks {
		if p <= 0 {
			continue
		}
		// In the order they were recorded: the ring is full when next
		// is not 0.
		s := append(slices.Clone(g.samples[g.next:]), g.samples[:g.next]...)
		for i, x := range slices.Backward(s) {
			if x == p {
				g.samples, g.next = slices.Delete(s, i, i+1), 0
				break
			}
		}
	}
	if len(g.samples) == 0 && g.window == 0 {
		g.window, g.windowSince = 1, time.Time{}
	}
}

// Outgrew reports whether a job whose peak resident memory was peak
// needs more than the memory for jobs as the latest decision saw it (the
// usable memory less what is not a job's: Decision.Headroom): such a job
// does not fit even alone, whatever else ran when it was killed. It is
// false before any decision knew a memory limit.
func (g *Gate) Outgrew(peak int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.forJobs > 0 && peak >= g.forJobs
}

// OOMRetry returns the re-queue rule with the Gate's Config.OOMAttempts.
func (g *Gate) OOMRetry() OOMRetry { return OOMRetry{MaxKills: g.cfg.OOMAttempts} }

// Stats is a snapshot of a Gate.
type Stats struct {
	// Starts counts the Admit answers that started a job, Holds the jobs
	// held at least once (asking Again adds none).
	Starts, Holds int
	// BoundDecisions counts the decisions in which memory was binding;
	// Bound is the latest of them (zero when none).
	BoundDecisions int
	Bound          Decision
	// PerJob is the current estimate of one job's peak (0: none), from
	// Samples finished peaks; SlowStart is true until the first.
	PerJob    int64
	Samples   int
	SlowStart bool
}

// Stats returns a snapshot of g.
func (g *Gate) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return Stats{Starts: g.starts, Holds: g.holds, BoundDecisions: g.boundCount, Bound: g.bound,
		PerJob: g.estimateLocked(nil), Samples: len(g.samples), SlowStart: len(g.samples) == 0}
}

// String says whether memory bound the number of jobs, for `ration
// limits` and the run's summary:
//
//	memory bound 3 of 8 jobs: 180 MiB headroom / 60 MiB per job (held 12 starts)
//	memory bound 1 of 4 jobs: memory pressure: PSI some avg10 31.00% > 20%; 1 job runs (held 3 starts)
//
// The number is MemoryJobs of the latest binding decision, or the jobs
// that ran when it held a start before any estimate (slow start) or for
// pressure.
//
//	memory never bound the jobs (peak 60 MiB per job over 40 jobs)
func (s Stats) String() string {
	if s.BoundDecisions == 0 {
		if s.PerJob > 0 {
			return fmt.Sprintf("memory never bound the jobs (peak %s per job over %d jobs)", FormatBytes(s.PerJob), s.Samples)
		}
		return "memory never bound the jobs"
	}
	b := s.Bound
	jobs, how := b.MemoryJobs, fmt.Sprintf("%s headroom / %s per job", FormatBytes(b.Headroom), FormatBytes(b.PerJob))
	if b.Rule == RulePressure || b.Rule == RuleSlowStart || jobs == 0 {
		jobs, how = b.Running, b.Reason
	}
	of := ""
	if b.Limit > 0 {
		of = fmt.Sprintf(" of %d", b.Limit)
	}
	return fmt.Sprintf("memory bound %d%s jobs: %s (held %s)", jobs, of, how, plural(s.Holds, "start"))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// FormatBytes writes a byte count the way the run's summary does: "85 MiB",
// "1.5 GiB", "512 KiB", "100 B". Negative counts keep their sign.
func FormatBytes(n int64) string {
	if n < 0 {
		return "-" + FormatBytes(-max(n, -math.MaxInt64))
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	s := fmt.Sprintf("%.1f", f)
	s = strings.TrimSuffix(s, ".0")
	if f >= 100 {
		s = fmt.Sprintf("%.0f", f)
	}
	return s + " " + units[u]
}
