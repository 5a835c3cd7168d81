// Package metrics exposes a run's jobs, workers, pool and cgroup budget as
// Prometheus metrics.
//
// A Metrics value is both an event.Observer (it counts what the runner
// reports) and a prometheus.Collector (it answers scrapes). It registers
// nothing by itself: the caller registers it on its own registry, so a
// service that embeds ration's runner gets no global side effects:
//
//	m := metrics.New(metrics.Options{Sample: metrics.CgroupSampler(cgroup.Reader{})})
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(m)
//
// # Attempts and jobs
//
// The runner reports JobStarted for every attempt of a job (Attempt 1, 2,
// ...), JobRetried when an attempt failed and the job will run again, and
// exactly one JobFinished per job. So ration_jobs_started_total counts jobs
// (first attempts only), ration_jobs_running counts attempts in flight, and
// at any scrape
//
//	started = succeeded + failed + quarantined + stopped + running
//
// holds once every event has been observed.
//
// It belongs to the command line: it imports cgroup, limits, runner/event
// and Prometheus' client, and no library package may import it, so that an
// embedder never pulls in Prometheus.
package metrics

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner/event"
)

// Sample is one reading of the cgroup, taken at scrape time.
type Sample struct {
	// HasMemory reports whether a memory cgroup was found;
	// MemoryUsageBytes is its current usage.
	HasMemory        bool
	MemoryUsageBytes int64
	// HasCPU reports whether a CPU cgroup was found. The counters are
	// cpu.stat's: enforcement periods that elapsed, periods in which the
	// cgroup was throttled, and the total time it was throttled.
	HasCPU        bool
	NrPeriods     int64
	NrThrottled   int64
	ThrottledTime time.Duration
}

// CgroupSampler returns a function that reads the calling process's cgroups
// with r on every call. A snapshot without a cgroup (Version 0) gives a
// Sample with neither HasMemory nor HasCPU set.
func CgroupSampler(r cgroup.Reader) func() (Sample, error) {
	return func() (Sample, error) {
		s, err := r.Read()
		if err != nil {
			return Sample{}, fmt.Errorf("metrics: read cgroup: %w", err)
		}
		return Sample{
			HasMemory:        s.MemoryDir != "",
			MemoryUsageBytes: s.MemoryUsage,
			HasCPU:           s.CPUDir != "",
			NrPeriods:        s.NrPeriods,
			NrThrottled:      s.NrThrottled,
			ThrottledTime:    s.ThrottledTime,
		}, nil
	}
}

// Options configure New.
type Options struct {
	// Sample is called once per scrape, from the scraping goroutine, to
	// read the cgroup metrics. Nil means no cgroup metrics. A Sample call
	// that fails leaves the cgroup metrics out of that scrape and counts
	// ration_cgroup_read_errors_total; the rest of the scrape succeeds.
	Sample func() (Sample, error)
}

// Metrics counts a run's events and answers scrapes. Create it with New;
// it is safe for concurrent use.
type Metrics struct {
	sample func() (Sample, error)

	jobsStarted      prometheus.Counter
	jobsSucceeded    prometheus.Counter
	jobsFailed       prometheus.Counter
	jobsQuarantined  prometheus.Counter
	jobsStopped      prometheus.Counter
	jobsNotStarted   prometheus.Counter
	jobsRetried      prometheus.Counter
	jobsSkipped      prometheus.Counter
	jobsRunning      prometheus.Gauge
	jobOOMKills      prometheus.Counter
	jobDuration      prometheus.Histogram
	queueWait        prometheus.Histogram
	workerStarts     prometheus.Counter
	workerBreaks     *prometheus.CounterVec
	workerRetires    prometheus.Counter
	poolSize         prometheus.Gauge
	poolResizes      prometheus.Counter
	poolRecreations  prometheus.Counter
	effectiveCPUs    prometheus.Gauge
	limitJobs        prometheus.Gauge
	cgroupReadErrors prometheus.Counter

	// memLimit is set only when the decision has a limit: an absent
	// series says "unlimited" better than a magic value would.
	mu       sync.Mutex
	memLimit *float64

	memUsageDesc, periodsDesc, throttledDesc, throttledSecsDesc, memLimitDesc *prometheus.Desc
}

// Buckets of the duration histograms: x4 steps from 5 ms to about 6 h
// (job duration) and from 1 ms to about 70 min (queue wait), because jobs
// range from a shell builtin to a batch step.
var (
	durationBuckets  = prometheus.ExponentialBuckets(0.005, 4, 12)
	queueWaitBuckets = prometheus.ExponentialBuckets(0.001, 4, 12)
)

// New returns a Metrics with every series at zero. Register it on a
// registry to expose it.
func New(opts Options) *Metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	}
	m := &Metrics{
		sample:          opts.Sample,
		jobsStarted:     c("ration_jobs_started_total", "Jobs whose first attempt started."),
		jobsSucceeded:   c("ration_jobs_succeeded_total", "Jobs that ended with exit status 0."),
		jobsFailed:      c("ration_jobs_failed_total", "Jobs that ended failed after their last attempt."),
		jobsQuarantined: c("ration_jobs_quarantined_total", "Jobs set aside because they broke too many workers."),
		jobsStopped:     c("ration_jobs_stopped_total", "Jobs the run stopped before they ended on their own (interrupt, --halt now); --resume runs them again."),
		jobsNotStarted:  c("ration_jobs_not_started_total", "Jobs given up because the run was interrupted before they started."),
		jobsRetried:     c("ration_jobs_retried_total", "Failed attempts that were retried."),
		jobsSkipped:     c("ration_jobs_skipped_total", "Jobs skipped because the joblog records them as done (--resume)."),
		jobsRunning:     g("ration_jobs_running", "Job attempts running now."),
		jobOOMKills:     c("ration_job_oom_kills_total", "Job attempts OOM-killed, re-queued or not (with --worker, see ration_worker_breaks_total{cause=\"oom\"})."),
		jobDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ration_job_duration_seconds", Help: "Run time of the last attempt of finished jobs.", Buckets: durationBuckets}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ration_job_queue_wait_seconds", Help: "Time from reading a job's input to starting its first attempt.", Buckets: queueWaitBuckets}),
		workerStarts: c("ration_worker_starts_total", "Worker processes started."),
		workerBreaks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ration_worker_breaks_total", Help: "Worker processes that broke, by cause."}, []string{"cause"}),
		workerRetires:    c("ration_worker_retirements_total", "Worker processes retired on purpose (shrink, recycling)."),
		poolSize:         g("ration_pool_size", "Concurrency the pool runs at now."),
		poolResizes:      c("ration_pool_resizes_total", "Changes of the pool's concurrency."),
		poolRecreations:  c("ration_pool_recreations_total", "Times systemic breakage made the pool recreate itself."),
		effectiveCPUs:    g("ration_limits_effective_cpus", "CPUs the container may use: min(affinity, cpuset, CFS quota), fractional."),
		limitJobs:        g("ration_limits_jobs", "Number of jobs the limits decision chose."),
		cgroupReadErrors: c("ration_cgroup_read_errors_total", "Scrapes at which the cgroup could not be read."),

		memLimitDesc: prometheus.NewDesc("ration_limits_memory_limit_bytes",
			"Tightest cgroup memory limit; absent when unlimited.", nil, nil),
		memUsageDesc: prometheus.NewDesc("ration_cgroup_memory_usage_bytes",
			"Memory usage of ration's memory cgroup, read at scrape time.", nil, nil),
		periodsDesc: prometheus.NewDesc("ration_cgroup_cpu_periods_total",
			"CFS enforcement periods elapsed in ration's CPU cgroup (cpu.stat nr_periods).", nil, nil),
		throttledDesc: prometheus.NewDesc("ration_cgroup_cpu_throttled_periods_total",
			"CFS periods in which ration's CPU cgroup was throttled (cpu.stat nr_throttled).", nil, nil),
		throttledSecsDesc: prometheus.NewDesc("ration_cgroup_cpu_throttled_seconds_total",
			"Total time ration's CPU cgroup was throttled (cpu.stat throttled_time/throttled_usec).", nil, nil),
	}
	// Every cause exists from the start, so rate() and alerts see a 0
	// rather than a missing series before the first break.
	for _, cause := range []event.Cause{event.CauseOOM, event.CauseSignal, event.CauseExit, event.CauseProtocol, event.CauseTimeout} {
		m.workerBreaks.WithLabelValues(string(cause))
	}
	return m
}

// SetLimits records a limits decision: effective CPUs, the memory limit
// (the series disappears when the decision has none) and the number of
// jobs. Call it at start and whenever the budget is re-read.
func (m *Metrics) SetLimits(d limits.Decision) {
	m.effectiveCPUs.Set(d.EffectiveCPUs)
	m.limitJobs.Set(float64(d.Jobs))
	m.mu.Lock()
	defer m.mu.Unlock()
	if d.MemoryLimitBytes != nil {
		v := float64(*d.MemoryLimitBytes)
		m.memLimit = &v
	} else {
		m.memLimit = nil
	}
}

// SetPoolSize records the pool's concurrency, for the start of a run
// (later changes arrive as PoolResized and PoolRecreated events).
func (m *Metrics) SetPoolSize(n int) { m.poolSize.Set(float64(n)) }

// Observe counts e. It is safe for concurrent use and never blocks.
func (m *Metrics) Observe(e event.Event) {
	switch e.Kind {
	case event.JobStarted:
		m.jobsRunning.Inc()
		if e.Attempt <= 1 {
			m.jobsStarted.Inc()
			m.queueWait.Observe(e.QueueWait.Seconds())
		}
	case event.JobRetried:
		m.jobsRunning.Dec()
		m.jobsRetried.Inc()
		m.countOOM(e)
	case event.JobFinished:
		m.countOOM(e)
		switch e.Outcome {
		case event.NotStarted:
			m.jobsNotStarted.Inc()
			return // it never ran: nothing to take off the running gauge
		case event.Succeeded:
			m.jobsSucceeded.Inc()
		case event.Quarantined:
			m.jobsQuarantined.Inc()
		case event.Stopped:
			m.jobsStopped.Inc()
		default:
			// Failed, and any outcome added later: counting it as a failure
			// keeps started = succeeded + failed + quarantined + stopped +
			// running.
			m.jobsFailed.Inc()
		}
		m.jobsRunning.Dec()
		m.jobDuration.Observe(e.Duration.Seconds())
	case event.JobSkipped:
		m.jobsSkipped.Inc()
	case event.WorkerStarted:
		m.workerStarts.Inc()
	case event.WorkerBroken:
		cause := string(e.Cause)
		if cause == "" {
			cause = "unknown"
		}
		m.workerBreaks.WithLabelValues(cause).Inc()
	case event.WorkerRetired:
		m.workerRetires.Inc()
	case event.PoolResized:
		m.poolResizes.Inc()
		m.poolSize.Set(float64(e.Size))
	case event.PoolRecreated:
		if e.Err == nil { // with Err: the pool gave up instead of recreating
			m.poolRecreations.Inc()
		}
		m.poolSize.Set(float64(e.Size))
	}
}

// countOOM counts a job attempt that the out-of-memory killer ended.
func (m *Metrics) countOOM(e event.Event) {
	if e.Cause == event.CauseOOM {
		m.jobOOMKills.Inc()
	}
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.jobsStarted, m.jobsSucceeded, m.jobsFailed, m.jobsQuarantined, m.jobsStopped, m.jobsNotStarted,
		m.jobsRetried, m.jobsSkipped, m.jobsRunning, m.jobOOMKills, m.jobDuration, m.queueWait,
		m.workerStarts, m.workerBreaks, m.workerRetires, m.poolSize, m.poolResizes,
		m.poolRecreations, m.effectiveCPUs, m.limitJobs, m.cgroupReadErrors,
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
	ch <- m.memLimitDesc
	if m.sample != nil {
		ch <- m.memUsageDesc
		ch <- m.periodsDesc
		ch <- m.throttledDesc
		ch <- m.throttledSecsDesc
	}
}

// Collect implements prometheus.Collector. It reads the cgroup through
// Options.Sample, so every scrape sees current usage and throttling.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	if m.sample != nil {
		// Sample first, so a failed read is counted in this very scrape.
		s, err := m.sample()
		if err != nil {
			m.cgroupReadErrors.Inc()
		} else {
			if s.HasMemory {
				ch <- prometheus.MustNewConstMetric(m.memUsageDesc, prometheus.GaugeValue, float64(s.MemoryUsageBytes))
			}
			if s.HasCPU {
				ch <- prometheus.MustNewConstMetric(m.periodsDesc, prometheus.CounterValue, float64(s.NrPeriods))
				ch <- prometheus.MustNewConstMetric(m.throttledDesc, prometheus.CounterValue, float64(s.NrThrottled))
				ch <- prometheus.MustNewConstMetric(m.throttledSecsDesc, prometheus.CounterValue, s.ThrottledTime.Seconds())
			}
		}
	}
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
	m.mu.Lock()
	limit := m.memLimit
	m.mu.Unlock()
	if limit != nil {
		ch <- prometheus.MustNewConstMetric(m.memLimitDesc, prometheus.GaugeValue, *limit)
	}
}
