// Package adapt decides, while a run is going, how many jobs may run at once,
// and tells whatever runs them (a [Resizer]) when that number changes. In
// ration the runner owns the one Controller of a run (runner.Config.Adapt)
// and resizes its job pool and, with --worker, the worker pool with it.
//
// A [Controller] keeps three bounds and applies the smallest:
//
//   - The limit: the limits decision (package limits) at the start of the
//     run, replaced by [Controller.SetLimit] when [Watch] sees the cgroup CPU
//     quota change (Kubernetes in-place pod resize). Nothing ever exceeds it.
//   - The OOM cap: an OOM event halves the current size (the rules are
//     package memory's: [memory.OOMHalves], [memory.HalveAfterOOM]; this
//     package applies them to its bounds). After each run of
//     Config.GrowAfter successes the cap grows by one, but not back to a
//     size that was OOM-killed: below that size lies the OOM ceiling, so a
//     pool whose memory fits 2 jobs but not 4 settles at 2 instead of
//     oscillating. The ceiling is probed again (raised by one) only after
//     ProbeRuns runs of successes at it, and forgotten when the limit
//     changes. Which events count as OOM is in [Controller.Observe].
//   - The memory cap (--mem-per-job auto): the peak RSS of finished jobs is
//     sampled, and once Config.MinSamples are known the cap is
//     floor(0.9 x memory limit / p95 peak), at least 1 ([memory.JobsFit]).
//
// The Controller calls Resize outside its lock, and when several goroutines
// change bounds at once the last value applied is always the current one:
// one goroutine at a time applies, and it loops until the applied size is the
// wanted size. Resize may therefore call back into the Controller.
//
// It imports cgroup, limits and runner/event; it must not import runner or
// runner/worker (both import it) nor the command line's packages.
package adapt

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner/event"
)

// Resizer is what a Controller controls. Resize sets the number of jobs that
// may run at once to n (n >= 1); reason says why, in words.
type Resizer interface {
	Resize(n int, reason string)
}

// ResizeFunc adapts a function to a Resizer.
type ResizeFunc func(n int, reason string)

// Resize calls f(n, reason).
func (f ResizeFunc) Resize(n int, reason string) { f(n, reason) }

// Defaults for the zero values of Config.
const (
	DefaultGrowAfter  = 10
	DefaultMinSamples = 5
	// ProbeRuns is how many runs of GrowAfter successes at the OOM
	// ceiling raise it by one: memory that was too small stays too small
	// unless the jobs changed, so the probe is rare.
	ProbeRuns = 10
	// sampleWindow is how many of the latest peak-RSS samples the p95 is
	// taken over: recent jobs predict the next ones better than old ones,
	// and it bounds memory for runs of millions of jobs.
	sampleWindow = 1024
)

// Config configures a Controller.
type Config struct {
	// Limit is the ceiling: the limits decision's number of jobs. Values
	// below 1 mean 1.
	Limit int
	// LimitReason says where Limit came from (limits.Decision.Reason).
	LimitReason string
	// GrowAfter is the number of successes in a row after which an OOM
	// cap grows by one; 0 means DefaultGrowAfter.
	GrowAfter int
	// HalveOnJobOOM makes every JobRetried or JobFinished event with
	// Cause OOM halve the size: the rule of one-process-per-job mode, where
	// a job killed by OOM is retried at lower concurrency. A worker pool
	// leaves it false: there one task that allocates too much is
	// quarantined without affecting the others, and only systemic OOM
	// breakage (a PoolRecreated event with Cause OOM) halves.
	HalveOnJobOOM bool
	// LearnMemory enables the memory cap (--mem-per-job auto).
	LearnMemory bool
	// MemoryLimit is the memory the jobs share, in bytes: the cgroup
	// limit, or the host's memory when there is none
	// (limits.Decision.MemoryLimitBytes or HostMemoryBytes). 0 disables
	// the memory cap.
	MemoryLimit int64
	// MinSamples is the number of peak-RSS samples needed before the
	// memory cap applies; 0 means DefaultMinSamples.
	MinSamples int
	// Logger receives one line per size change; nil discards.
	Logger *slog.Logger
}

// Stats is a snapshot of a Controller.
type Stats struct {
	Size        int    // the size last applied
	Limit       int    // the ceiling
	LimitReason string // why the ceiling is what it is
	OOMCap      int    // 0 when no OOM cap is in force
	OOMCeiling  int    // the largest size not known to OOM; 0 when none
	MemoryCap   int    // 0 when no memory cap is in force
	Reason      string // why Size is what it is
	// OOMReductions counts halvings, Grows the steps back up, Resizes
	// every call of Resize.
	OOMReductions int
	Grows         int
	Resizes       int
	// LearnedMemPerJob is the p95 of the sampled peak RSS in bytes (0
	// before the first sample), over Samples samples.
	LearnedMemPerJob int64
	Samples          int
	MemoryLimit      int64
}

// String summarizes s in one line for the end-of-run summary, e.g.
//
//	concurrency 2 (limit 4; 1 OOM halving, 1 grow): a job was OOM-killed at 4 jobs: halved to 2 (will grow back to at most 3)
//
// with ", learned memory per job 80 MiB (p95 of 12)" when memory was
// sampled. The reason is given only when the size is not the limit.
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "concurrency %d", s.Size)
	var notes []string
	if s.Size != s.Limit {
		notes = append(notes, fmt.Sprintf("limit %d", s.Limit))
	}
	if s.OOMReductions > 0 {
		notes = append(notes, plural(s.OOMReductions, "OOM halving", "OOM halvings"))
	}
	if s.Grows > 0 {
		notes = append(notes, plural(s.Grows, "grow", "grows"))
	}
	if s.Resizes > 0 {
		notes = append(notes, plural(s.Resizes, "change", "changes"))
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, "; ") + ")")
	}
	if s.Size != s.Limit && s.Reason != "" {
		b.WriteString(": " + s.Reason)
	}
	if s.LearnedMemPerJob > 0 {
		fmt.Fprintf(&b, ", learned memory per job %s (p95 of %d)", limits.FormatSize(s.LearnedMemPerJob), s.Samples)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Controller adapts the size of one Resizer. It is safe for concurrent use
// and is an event.Observer.
type Controller struct {
	target Resizer
	cfg    Config
	log    *slog.Logger

	mu         sync.Mutex
	limit      int
	limitWhy   string
	oomCap     int
	oomCeil    int
	successes  int
	probeRuns  int
	memCap     int
	memLimit   int64
	samples    []int64 // ring of the latest peak RSS values
	next       int     // next ring position once full
	learned    int64
	applied    int    // last size passed to Resize
	reason     string // reason for the wanted size
	applying   bool
	halvedAt   time.Time // when the size was last halved
	reductions int
	grows      int
	resizes    int
}

// New returns a Controller for target. It does not call Resize: the target
// is assumed to run at cfg.Limit already.
func New(target Resizer, cfg Config) *Controller {
	cfg.Limit = max(cfg.Limit, 1)
	if cfg.GrowAfter <= 0 {
		cfg.GrowAfter = DefaultGrowAfter
	}
	if cfg.MinSamples <= 0 {
		cfg.MinSamples = DefaultMinSamples
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Controller{target: target, cfg: cfg, log: log, limit: cfg.Limit, limitWhy: cfg.LimitReason,
		memLimit: cfg.MemoryLimit, applied: cfg.Limit, reason: cfg.LimitReason}
}

// Size returns the size the Controller wants now (it is being applied, or
// has been).
func (c *Controller) Size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wantLocked()
}

// Stats returns a snapshot of the Controller.
func (c *Controller) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Size: c.applied, Limit: c.limit, LimitReason: c.limitWhy, OOMCap: c.oomCap, OOMCeiling: c.oomCeil,
		MemoryCap: c.memCap, Reason: c.reason, OOMReductions: c.reductions, Grows: c.grows, Resizes: c.resizes,
		LearnedMemPerJob: c.learned, Samples: len(c.samples), MemoryLimit: c.memLimit}
}

// SetLimit sets the ceiling to n (at least 1), e.g. after the CPU quota
// changed. It forgets the OOM ceiling, since the environment changed, but
// keeps an OOM cap in force (it still grows back after successes).
func (c *Controller) SetLimit(n int, reason string) {
	n = max(n, 1)
	c.mu.Lock()
	if n == c.limit {
		c.mu.Unlock()
		return
	}
	c.limit, c.limitWhy = n, reason
	c.oomCeil = 0
	if c.oomCap >= n {
		c.oomCap = 0
	}
	c.reason = reason
	c.mu.Unlock()
	c.apply()
}

// SetMemoryLimit sets the memory the jobs share (0: unknown, no memory cap)
// and recomputes the memory cap.
func (c *Controller) SetMemoryLimit(bytes int64) {
	c.mu.Lock()
	if bytes == c.memLimit {
		c.mu.Unlock()
		return
	}
	c.memLimit = max(bytes, 0)
	c.recomputeMemLocked()
	c.mu.Unlock()
	c.apply()
}

// Observe feeds one event to the Controller:
//
//   - PoolRecreated with Cause OOM halves the size (systemic OOM breakage of
//     a worker pool); so do JobRetried and JobFinished with Cause OOM when
//     Config.HalveOnJobOOM is set, unless the event's attempt (Time minus
//     Duration) started before the last halving (jobs that ran side by
//     side and were OOM-killed together halve once) or was killed while
//     no other job ran (Event.Alone: fewer jobs would not have saved it).
//   - JobFinished with Outcome Succeeded counts towards growing back.
//     Any other JobFinished, any JobRetried, and a WorkerBroken on a task
//     (Seq set: the task is re-dispatched inside one attempt, so no
//     JobRetried tells of it) end the run of successes.
//   - JobFinished with PeakRSS > 0 is a memory sample when
//     Config.LearnMemory is set, unless it is the OOM kill of a job
//     running alone: that job does not fit at all, and its peak, near the
//     whole limit, would cap the jobs that do at one.
//
// Other events are ignored.
func (c *Controller) Observe(e event.Event) {
	c.mu.Lock()
	changed := false
	switch e.Kind {
	case event.PoolRecreated:
		if e.Cause == event.CauseOOM {
			changed = c.halveLocked("systemic OOM breakage")
		}
	case event.WorkerBroken:
		if e.Seq != 0 {
			c.successes = 0
		}
	case event.JobRetried:
		c.successes = 0
		if c.halvesLocked(e) {
			changed = c.halveLocked("a job was OOM-killed")
		}
	case event.JobFinished:
		if e.PeakRSS > 0 && c.cfg.LearnMemory && !(e.Cause == event.CauseOOM && e.Alone) {
			c.sampleLocked(e.PeakRSS)
			changed = true
		}
		switch {
		case e.Outcome == event.Succeeded:
			changed = c.successLocked() || changed
		case c.halvesLocked(e):
			changed = c.halveLocked("a job was OOM-killed") || changed
		case e.Cause == event.CauseOOM:
			c.successes = 0
		default:
			c.successes = 0
		}
	}
	c.mu.Unlock()
	if changed {
		c.apply()
	}
}

// wantLocked is the size to apply: the smallest bound.
func (c *Controller) wantLocked() int {
	n := c.limit
	if c.oomCap > 0 {
		n = min(n, c.oomCap)
	}
	if c.memCap > 0 {
		n = min(n, c.memCap)
	}
	return max(n, 1)
}

// halvesLocked reports whether the job event e halves the size: an OOM
// kill, with Config.HalveOnJobOOM, that memory.OOMHalves says halves (not
// one of a job that ran alone, Event.Alone, nor of an attempt that started
// before the last halving). An attempt started at the event's Time minus
// its Duration; an event without either has no known start.
func (c *Controller) halvesLocked(e event.Event) bool {
	if e.Cause != event.CauseOOM || !c.cfg.HalveOnJobOOM {
		return false
	}
	var started time.Time
	if !e.Time.IsZero() && e.Duration > 0 {
		started = e.Time.Add(-e.Duration)
	}
	return memory.OOMHalves(e.Alone, started, c.halvedAt)
}

// halveLocked halves the size (memory.HalveAfterOOM). The OOM ceiling it
// sets is kept only where the size was above 1.
func (c *Controller) halveLocked(why string) bool {
	c.halvedAt = time.Now()
	cur := c.wantLocked()
	size, ceil := memory.HalveAfterOOM(cur)
	c.oomCap = size
	if ceil > 0 {
		c.oomCeil = ceil
	}
	c.successes, c.probeRuns = 0, 0
	c.reductions++
	c.reason = fmt.Sprintf("%s at %d jobs: halved to %d (will grow back to at most %d)", why, cur, c.oomCap, c.growCeilLocked())
	return true
}

// growCeilLocked is how far an OOM cap may grow back.
func (c *Controller) growCeilLocked() int {
	n := c.limit
	if c.oomCeil > 0 {
		n = min(n, c.oomCeil)
	}
	return n
}

func (c *Controller) successLocked() bool {
	if c.oomCap == 0 {
		return false
	}
	c.successes++
	if c.successes < c.cfg.GrowAfter {
		return false
	}
	c.successes = 0
	ceil := c.growCeilLocked()
	if c.oomCap >= ceil {
		if c.oomCeil == 0 || c.oomCap < c.oomCeil {
			return false
		}
		// At the OOM ceiling: probe above it, rarely.
		c.probeRuns++
		if c.probeRuns < ProbeRuns {
			return false
		}
		c.probeRuns = 0
		c.oomCeil++
		if c.oomCeil >= c.limit {
			c.oomCeil = 0
		}
		c.oomCap++
		c.grows++
		c.reason = fmt.Sprintf("%d successes in a row at the OOM ceiling: probing %d", ProbeRuns*c.cfg.GrowAfter, c.oomCap)
		if c.oomCap >= c.limit {
			c.oomCap = 0
		}
		return true
	}
	c.oomCap++
	c.grows++
	c.reason = fmt.Sprintf("%d successes in a row: grew back to %d", c.cfg.GrowAfter, c.oomCap)
	if c.oomCap >= c.limit {
		c.oomCap = 0
	}
	return true
}

func (c *Controller) sampleLocked(rss int64) {
	if len(c.samples) < sampleWindow {
		c.samples = append(c.samples, rss)
	} else {
		c.samples[c.next] = rss
		c.next = (c.next + 1) % sampleWindow
	}
	c.recomputeMemLocked()
}

func (c *Controller) recomputeMemLocked() {
	if len(c.samples) == 0 {
		return
	}
	c.learned = p95(c.samples)
	if !c.cfg.LearnMemory || c.memLimit <= 0 || len(c.samples) < c.cfg.MinSamples || c.learned <= 0 {
		c.memCap = 0
		return
	}
	fit, _ := memory.JobsFit(c.memLimit, c.learned)
	n := max(1, fit)
	if n != c.memCap {
		c.memCap = n
		c.reason = fmt.Sprintf("learned p95 peak RSS %s per job over %d jobs: %d x %s fits in %.0f%% of %s",
			limits.FormatSize(c.learned), len(c.samples), n, limits.FormatSize(c.learned),
			memory.Headroom*100, limits.FormatSize(c.memLimit))
	}
}

// p95 is the nearest-rank 95th percentile.
func p95(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(0.95*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// apply calls Resize until the applied size is the wanted one. Only one
// goroutine applies at a time; the others leave their change to it.
func (c *Controller) apply() {
	c.mu.Lock()
	if c.applying {
		c.mu.Unlock()
		return
	}
	c.applying = true
	for {
		want, why := c.wantLocked(), c.reason
		if want == c.applied {
			c.applying = false
			c.mu.Unlock()
			return
		}
		c.applied = want
		c.resizes++
		c.mu.Unlock()
		c.log.Info("concurrency changed", "size", want, "reason", why)
		c.target.Resize(want, why)
		c.mu.Lock()
	}
}

// DecideFunc re-reads the limits; see [CgroupDecider].
type DecideFunc func(ctx context.Context) (limits.Decision, error)

// CgroupDecider returns a DecideFunc that reads the cgroups of process pid
// (0: the calling process) live and applies limits.DecideFrom with the
// given -j value and per-job memory. Reading another process's cgroup lets
// a test move only a child it started into a cgroup whose quota it changes,
// and lets ration watch the cgroup its workers run in.
func CgroupDecider(pid int, jobs string, memPerJob int64) DecideFunc {
	return func(context.Context) (limits.Decision, error) {
		var snap cgroup.Snapshot
		var err error
		if pid > 0 {
			snap, err = cgroup.Reader{}.ReadProcess(pid)
		} else {
			snap, err = cgroup.Reader{}.Read()
		}
		if err != nil {
			return limits.Decision{}, err
		}
		return limits.DecideFrom(snap, jobs, memPerJob)
	}
}

// DefaultWatchInterval is how often ration re-reads the limits by default.
const DefaultWatchInterval = 5 * time.Second

// Watch calls decide every interval until ctx is done and passes what
// changed to c: a new number of jobs to SetLimit (with the decision's
// reason), a new memory limit to SetMemoryLimit. The first reading only
// sets the baseline. A failing decide is logged and retried at the next
// tick; it never stops the watch. Watch returns ctx's error (context
// cause) when ctx is done. interval <= 0 means DefaultWatchInterval.
func Watch(ctx context.Context, c *Controller, interval time.Duration, decide DecideFunc) error {
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	lastJobs := -1
	var lastMem int64 = -1
	for {
		d, err := decide(ctx)
		switch {
		case err != nil:
			c.log.Warn("re-reading limits failed", "err", err)
		default:
			mem := memoryOf(d)
			if lastJobs >= 0 && d.Jobs != lastJobs {
				c.SetLimit(d.Jobs, "limits changed: "+d.Reason)
			}
			if lastMem >= 0 && mem != lastMem {
				c.SetMemoryLimit(mem)
			}
			lastJobs, lastMem = d.Jobs, mem
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}

// memoryOf is the memory the jobs of d share: the cgroup limit, or the
// host's memory when there is none.
func memoryOf(d limits.Decision) int64 {
	if d.MemoryLimitBytes != nil {
		return *d.MemoryLimitBytes
	}
	return d.HostMemoryBytes
}

// MemoryOf returns the memory the jobs of d share, for Config.MemoryLimit:
// the cgroup's limit, or the host's memory when the cgroup has none.
func MemoryOf(d limits.Decision) int64 { return memoryOf(d) }
