package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner/event"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func fixedSample() (Sample, error) {
	return Sample{HasMemory: true, MemoryUsageBytes: 1 << 20, HasCPU: true, NrPeriods: 100, NrThrottled: 7, ThrottledTime: 1500 * time.Millisecond}, nil
}

// jobEvents plays one job through the runner's event sequence: one
// JobStarted per attempt, JobRetried after each failed attempt but the last,
// one JobFinished.
func jobEvents(seq int64, attempts int, outcome event.Outcome) []event.Event {
	var evs []event.Event
	for a := 1; a <= attempts; a++ {
		evs = append(evs, event.Event{Kind: event.JobStarted, Seq: seq, Attempt: a, QueueWait: 10 * time.Millisecond})
		if a < attempts {
			evs = append(evs, event.Event{Kind: event.JobRetried, Seq: seq, Attempt: a, Duration: time.Second})
		}
	}
	return append(evs, event.Event{Kind: event.JobFinished, Seq: seq, Attempt: attempts, Outcome: outcome, Duration: 2 * time.Second})
}

func TestObserveCountsConcurrently(t *testing.T) {
	m := New(Options{})
	outcomes := []event.Outcome{event.Succeeded, event.Succeeded, event.Failed, event.Quarantined}
	const perGoroutine = 200
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range perGoroutine {
				seq := int64(g*perGoroutine + i + 1)
				for _, e := range jobEvents(seq, 1+i%3, outcomes[i%len(outcomes)]) {
					m.Observe(e)
				}
			}
		})
	}
	// Two jobs still running when we look.
	m.Observe(event.Event{Kind: event.JobStarted, Seq: 9001, Attempt: 1})
	m.Observe(event.Event{Kind: event.JobStarted, Seq: 9002, Attempt: 1})
	m.Observe(event.Event{Kind: event.JobFinished, Seq: 9003, Outcome: event.NotStarted})
	wg.Wait()

	started := testutil.ToFloat64(m.jobsStarted)
	ok := testutil.ToFloat64(m.jobsSucceeded)
	failed := testutil.ToFloat64(m.jobsFailed)
	quar := testutil.ToFloat64(m.jobsQuarantined)
	running := testutil.ToFloat64(m.jobsRunning)
	if started != 4*perGoroutine+2 {
		t.Errorf("started = %v, want %d", started, 4*perGoroutine+2)
	}
	if running != 2 {
		t.Errorf("running = %v, want 2", running)
	}
	if started != ok+failed+quar+running {
		t.Errorf("started %v != succeeded %v + failed %v + quarantined %v + running %v", started, ok, failed, quar, running)
	}
	if ok != 2*perGoroutine || failed != perGoroutine || quar != perGoroutine {
		t.Errorf("succeeded/failed/quarantined = %v/%v/%v", ok, failed, quar)
	}
	// Attempts per job cycle 1,2,3: retries = sum of (attempts-1).
	wantRetries := 0
	for i := range perGoroutine {
		wantRetries += i % 3
	}
	if got := testutil.ToFloat64(m.jobsRetried); got != float64(4*wantRetries) {
		t.Errorf("retried = %v, want %d", got, 4*wantRetries)
	}
	if got := testutil.ToFloat64(m.jobsNotStarted); got != 1 {
		t.Errorf("not started = %v, want 1", got)
	}
}

func TestWorkerAndPoolEvents(t *testing.T) {
	m := New(Options{})
	for _, e := range []event.Event{
		{Kind: event.WorkerStarted}, {Kind: event.WorkerStarted}, {Kind: event.WorkerStarted},
		{Kind: event.WorkerBroken, Cause: event.CauseOOM},
		{Kind: event.WorkerBroken, Cause: event.CauseOOM},
		{Kind: event.WorkerBroken, Cause: event.CauseTimeout},
		{Kind: event.WorkerRetired},
		{Kind: event.PoolResized, Size: 3, Reason: "quota shrank"},
		{Kind: event.PoolRecreated, Size: 2, Reason: "systemic breakage"},
		{Kind: event.JobSkipped, Seq: 4},
	} {
		m.Observe(e)
	}
	want := `
# HELP ration_pool_size Concurrency the pool runs at now.
# TYPE ration_pool_size gauge
ration_pool_size 2
# HELP ration_worker_breaks_total Worker processes that broke, by cause.
# TYPE ration_worker_breaks_total counter
ration_worker_breaks_total{cause="exit"} 0
ration_worker_breaks_total{cause="oom"} 2
ration_worker_breaks_total{cause="protocol"} 0
ration_worker_breaks_total{cause="signal"} 0
ration_worker_breaks_total{cause="timeout"} 1
# HELP ration_worker_starts_total Worker processes started.
# TYPE ration_worker_starts_total counter
ration_worker_starts_total 3
# HELP ration_pool_recreations_total Times systemic breakage made the pool recreate itself.
# TYPE ration_pool_recreations_total counter
ration_pool_recreations_total 1
# HELP ration_jobs_skipped_total Jobs skipped because the joblog records them as done (--resume).
# TYPE ration_jobs_skipped_total counter
ration_jobs_skipped_total 1
`
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"ration_pool_size", "ration_worker_breaks_total", "ration_worker_starts_total",
		"ration_pool_recreations_total", "ration_jobs_skipped_total"); err != nil {
		t.Error(err)
	}
}

func TestLintClean(t *testing.T) {
	m := New(Options{Sample: fixedSample})
	limit := int64(2 << 30)
	m.SetLimits(limits.Decision{EffectiveCPUs: 1.5, MemoryLimitBytes: &limit, Jobs: 3})
	m.SetPoolSize(3)
	for _, e := range jobEvents(1, 2, event.Failed) {
		m.Observe(e)
	}
	problems, err := testutil.CollectAndLint(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	// Every metric must be there, the scrape-time ones included.
	if n := testutil.CollectAndCount(m); n < 25 {
		t.Errorf("collected %d series, want at least 25", n)
	}
	// A pedantic registry checks that Describe and Collect agree.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

func TestLimitsAndCgroupSample(t *testing.T) {
	m := New(Options{Sample: fixedSample})
	limit := int64(4 << 30)
	m.SetLimits(limits.Decision{EffectiveCPUs: 2.5, MemoryLimitBytes: &limit, Jobs: 5})
	want := `
# HELP ration_cgroup_cpu_throttled_periods_total CFS periods in which ration's CPU cgroup was throttled (cpu.stat nr_throttled).
# TYPE ration_cgroup_cpu_throttled_periods_total counter
ration_cgroup_cpu_throttled_periods_total 7
# HELP ration_cgroup_cpu_throttled_seconds_total Total time ration's CPU cgroup was throttled (cpu.stat throttled_time/throttled_usec).
# TYPE ration_cgroup_cpu_throttled_seconds_total counter
ration_cgroup_cpu_throttled_seconds_total 1.5
# HELP ration_cgroup_memory_usage_bytes Memory usage of ration's memory cgroup, read at scrape time.
# TYPE ration_cgroup_memory_usage_bytes gauge
ration_cgroup_memory_usage_bytes 1.048576e+06
# HELP ration_limits_effective_cpus CPUs the container may use: min(affinity, cpuset, CFS quota), fractional.
# TYPE ration_limits_effective_cpus gauge
ration_limits_effective_cpus 2.5
# HELP ration_limits_jobs Number of jobs the limits decision chose.
# TYPE ration_limits_jobs gauge
ration_limits_jobs 5
# HELP ration_limits_memory_limit_bytes Tightest cgroup memory limit; absent when unlimited.
# TYPE ration_limits_memory_limit_bytes gauge
ration_limits_memory_limit_bytes 4.294967296e+09
`
	names := []string{"ration_cgroup_cpu_throttled_periods_total", "ration_cgroup_cpu_throttled_seconds_total",
		"ration_cgroup_memory_usage_bytes", "ration_limits_effective_cpus", "ration_limits_jobs", "ration_limits_memory_limit_bytes"}
	if err := testutil.CollectAndCompare(m, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	// Unlimited memory: the series goes away instead of reading 0.
	m.SetLimits(limits.Decision{EffectiveCPUs: 2.5, Jobs: 5})
	if n := testutil.CollectAndCount(m, "ration_limits_memory_limit_bytes"); n != 0 {
		t.Errorf("memory limit series without a limit: %d, want 0", n)
	}
}

func TestSampleErrorDropsCgroupSeriesOnly(t *testing.T) {
	calls := 0
	m := New(Options{Sample: func() (Sample, error) {
		calls++
		return Sample{}, errors.New("cgroup gone")
	}})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	if n, err := testutil.GatherAndCount(reg, "ration_cgroup_memory_usage_bytes"); err != nil || n != 0 {
		t.Errorf("memory usage series after a failed read: %d (err %v), want 0", n, err)
	}
	if got := testutil.ToFloat64(m.cgroupReadErrors); got != 1 || calls != 1 {
		t.Errorf("read errors = %v after %d calls, want 1 after 1", got, calls)
	}
}

// TestCgroupSamplerLive reads this machine's cgroups: the memory usage of a
// process is never zero when a memory cgroup exists.
func TestCgroupSamplerLive(t *testing.T) {
	s, err := CgroupSampler(cgroup.Reader{})()
	if err != nil {
		t.Skipf("no readable cgroup here: %v", err)
	}
	if !s.HasMemory && !s.HasCPU {
		t.Skip("no cgroup found for this process")
	}
	if s.HasMemory && s.MemoryUsageBytes <= 0 {
		t.Errorf("memory usage = %d with a memory cgroup", s.MemoryUsageBytes)
	}
	if s.HasCPU && (s.NrPeriods < s.NrThrottled || s.ThrottledTime < 0) {
		t.Errorf("inconsistent cpu.stat: %+v", s)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestServeScrape(t *testing.T) {
	for _, debug := range []bool{false, true} {
		t.Run(fmt.Sprint("debug=", debug), func(t *testing.T) {
			m := New(Options{Sample: fixedSample})
			reg := prometheus.NewRegistry()
			reg.MustRegister(m)
			srv, err := Listen("127.0.0.1:0", reg, ServerOptions{Debug: debug})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ctx) }()
			base := "http://" + srv.Addr().String()

			for _, e := range jobEvents(1, 1, event.Succeeded) {
				m.Observe(e)
			}
			m.Observe(event.Event{Kind: event.JobStarted, Seq: 2, Attempt: 1})
			code, body := get(t, base+"/metrics")
			if code != http.StatusOK {
				t.Fatalf("/metrics: status %d", code)
			}
			for _, want := range []string{"ration_jobs_started_total 2", "ration_jobs_succeeded_total 1",
				"ration_jobs_running 1", "ration_cgroup_memory_usage_bytes 1.048576e+06"} {
				if !strings.Contains(body, want+"\n") {
					t.Errorf("/metrics lacks %q", want)
				}
			}
			code, body = get(t, base+"/debug/pprof/")
			if debug && (code != http.StatusOK || !strings.Contains(body, "goroutine")) {
				t.Errorf("/debug/pprof/ with debug: status %d", code)
			}
			if !debug && code != http.StatusNotFound {
				t.Errorf("/debug/pprof/ without debug: status %d, want 404", code)
			}
			if debug {
				if code, _ := get(t, base+"/debug/pprof/goroutine?debug=1"); code != http.StatusOK {
					t.Errorf("goroutine profile: status %d", code)
				}
			}

			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve after cancel: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not return after its context ended")
			}
			if _, err := http.Get(base + "/metrics"); err == nil {
				t.Error("server still answers after shutdown")
			}
		})
	}
}

func TestListenTakenPort(t *testing.T) {
	srv, err := Listen("127.0.0.1:0", prometheus.NewRegistry(), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	if _, err := Listen(srv.Addr().String(), prometheus.NewRegistry(), ServerOptions{}); err == nil {
		t.Error("second Listen on the same port succeeded")
	}
}

// Example shows the wiring of a run: observe events, register on a private
// registry, serve until the run ends.
func Example() {
	m := New(Options{Sample: CgroupSampler(cgroup.Reader{})})
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)

	srv, err := Listen("127.0.0.1:0", reg, ServerOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()

	var obs event.Observer = m // pass to the runner
	obs.Observe(event.Event{Kind: event.JobStarted, Seq: 1, Attempt: 1})
	obs.Observe(event.Event{Kind: event.JobFinished, Seq: 1, Outcome: event.Succeeded, Duration: time.Second})
	resp, err := http.Get("http://" + srv.Addr().String() + "/metrics")
	if err != nil {
		fmt.Println(err)
		stop()
		<-done
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "ration_jobs_") {
			fmt.Print(line)
		}
	}

	stop()
	fmt.Println(<-done)
	// Output:
	// ration_jobs_failed_total 0
	// ration_jobs_not_started_total 0
	// ration_jobs_quarantined_total 0
	// ration_jobs_retried_total 0
	// ration_jobs_running 0
	// ration_jobs_skipped_total 0
	// ration_jobs_started_total 1
	// ration_jobs_stopped_total 0
	// ration_jobs_succeeded_total 1
	// <nil>
}

// TestGiveUpIsNotARecreation: the PoolRecreated of a pool that gives up
// (Err set, Size 0) recreates nothing, so ration_pool_recreations_total
// counts only the recreations, as the worker summary does.
func TestGiveUpIsNotARecreation(t *testing.T) {
	m := New(Options{})
	m.Observe(event.Event{Kind: event.PoolRecreated, Size: 2, Reason: "systemic breakage"})
	m.Observe(event.Event{Kind: event.PoolRecreated, Size: 0, Err: errors.New("gave up"), Reason: "giving up"})
	if got := testutil.ToFloat64(m.poolRecreations); got != 1 {
		t.Errorf("ration_pool_recreations_total %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.poolSize); got != 0 {
		t.Errorf("ration_pool_size %v after giving up, want 0", got)
	}
}

// TestJobOOMKills: in a memory-bound pod the OOM kills of jobs are what
// an alert watches; one process per job had no series for them (only
// worker breaks had a cause). Each OOM-killed attempt counts once,
// re-queued or final; other failures do not.
func TestJobOOMKills(t *testing.T) {
	m := New(Options{})
	for _, e := range []event.Event{
		{Kind: event.JobStarted, Seq: 1, Attempt: 1},
		{Kind: event.JobRetried, Seq: 1, Attempt: 1, Cause: event.CauseOOM, Signal: 9, ExitCode: -1},
		{Kind: event.JobStarted, Seq: 1, Attempt: 2},
		{Kind: event.JobFinished, Seq: 1, Attempt: 2, Outcome: event.Failed, Cause: event.CauseOOM, Signal: 9, ExitCode: -1},
		{Kind: event.JobStarted, Seq: 2, Attempt: 1},
		{Kind: event.JobRetried, Seq: 2, Attempt: 1, ExitCode: 3},
		{Kind: event.JobStarted, Seq: 2, Attempt: 2},
		{Kind: event.JobFinished, Seq: 2, Attempt: 2, Outcome: event.Failed, Cause: event.CauseTimeout},
	} {
		m.Observe(e)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	if got, err := testutil.GatherAndCount(reg, "ration_job_oom_kills_total"); err != nil || got != 1 {
		t.Fatalf("ration_job_oom_kills_total series: %d, %v; want 1", got, err)
	}
	if got := testutil.ToFloat64(m.jobOOMKills); got != 2 {
		t.Errorf("ration_job_oom_kills_total = %v, want 2", got)
	}
}
