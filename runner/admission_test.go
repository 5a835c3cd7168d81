package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/admit"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
)

// eventKinds lists the kinds (with causes) of input in's events.
func eventKinds(rec *recorder, in string) string {
	var s []string
	for _, e := range rec.Events() {
		if e.Input != in {
			continue
		}
		k := e.Kind.String()
		if e.Cause != event.CauseNone {
			k += ":" + string(e.Cause)
		}
		s = append(s, k)
	}
	return strings.Join(s, " ")
}

// TestOOMThroughShell: a job whose shell exits 137 after its child's
// SIGKILL, while the oom_kill counter rose, is OOM-killed; killed beside
// another running job it is re-queued without counting against Retries,
// and runs again only once fewer than half of the others run (here:
// alone, after the other job ended); killed alone, it fails, with the
// reason in its error.
func TestOOMThroughShell(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	dir, count := dirCounter(t)
	// "big": a child shell raises the counter and SIGKILLs itself; the
	// job's shell waits for it and exits 137.
	script := `case {} in
	big) sh -c 'touch ` + dir + `/k-$(date +%s%N); kill -9 $$'; exit $? ;;
	slow) sleep 1 ;;
	esac`
	var rec recorder
	r, err := New(Config{Command: []string{"sh", "-c", script}, Input: input.Args([]string{"slow", "big"}),
		Jobs: 2, Observer: &rec, OOMKills: count})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Succeeded != 1 || sum.Failed != 1 || sum.OOMRetried != 1 {
		t.Errorf("summary %+v: want slow succeeded, big failed after an OOM re-queue", sum)
	}
	want := "job_started job_retried:oom job_started job_finished:oom"
	if got := eventKinds(&rec, "big"); got != want {
		t.Errorf("big: events %q, want %q", got, want)
	}
	_, spans := maxRunning(&rec)
	var slowEnd time.Time
	var big []time.Time // the attempts' starts, in order
	for _, x := range spans {
		if x.in == "slow" {
			slowEnd = x.end
		} else {
			big = append(big, x.start)
		}
	}
	if len(big) != 2 || big[1].Before(slowEnd.Add(-20*time.Millisecond)) {
		t.Errorf("attempts %+v: want big's second attempt after slow ended", spans)
	}
	for _, e := range rec.Kind(event.JobFinished) {
		if e.Input == "big" && (e.ExitCode != 137 || !errors.Is(e.Err, ErrOOMKilled) || !strings.Contains(e.Err.Error(), "OOM-killed while running alone (kill 2)")) {
			t.Errorf("big: exit %d, error %v; want 137 and ErrOOMKilled, killed alone", e.ExitCode, e.Err)
		}
	}
}

// TestOOMNotAttributed: a job that fails for its own reason while the
// counter does not rise is not OOM-killed, even with exit 137.
func TestOOMNotAttributed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	_, count := dirCounter(t)
	var rec recorder
	r, err := New(Config{Command: []string{"sh", "-c", "exit 137"}, Input: input.Args([]string{"x"}),
		Jobs: 1, Observer: &rec, OOMKills: count})
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := r.Run(context.Background()); err != nil || sum.Failed != 1 || sum.OOMRetried != 0 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	if got := eventKinds(&rec, "x"); got != "job_started job_finished" {
		t.Errorf("events %q, want a plain failure", got)
	}
}

// memFixture writes a memory cgroup directory of the given version: a
// limit of 1 GiB, usage of 10 MiB, no OOM kill, and on v2 the given
// memory.pressure.
func memFixture(t *testing.T, version int, pressure string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"memory.usage_in_bytes": "10485760\n", "memory.limit_in_bytes": "1073741824\n",
		"memory.stat": "total_inactive_file 0\ntotal_rss 10485760\ntotal_cache 0\n", "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
	}
	if version == 2 {
		files = map[string]string{
			"memory.current": "10485760\n", "memory.max": "1073741824\n",
			"memory.stat": "anon 10485760\nfile 0\ninactive_file 0\n", "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n",
			"memory.pressure": pressure,
		}
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// span is when one attempt ran.
type span struct {
	in         string
	start, end time.Time
}

// maxRunning is the largest number of attempts that ran at once, from
// their start events and durations (a job's JobFinished comes after the
// next job may have started in its place), and the attempts in start
// order. Overlaps under 20 ms do not count.
func maxRunning(rec *recorder) (most int, spans []span) {
	starts := map[string]time.Time{}
	for _, e := range rec.Events() {
		switch e.Kind {
		case event.JobStarted:
			starts[e.Input] = e.Time
		case event.JobFinished, event.JobRetried:
			spans = append(spans, span{e.Input, starts[e.Input], starts[e.Input].Add(e.Duration)})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	for _, x := range spans {
		n := 0
		for _, y := range spans {
			// The event's time is a little after the process started,
			// so an end may look up to a few ms late.
			if !y.start.After(x.start) && y.end.After(x.start.Add(20*time.Millisecond)) {
				n++
			}
		}
		most = max(most, n)
	}
	return most, spans
}

// TestAdmissionSlowStart: with a memory limit (a v1 fixture) and nothing
// known of the jobs' memory, the first job runs alone until it ends with
// its peak RSS; then the small jobs fit, and run 3 at once (the CPU bound).
func TestAdmissionSlowStart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("peak RSS and /proc")
	}
	var rec recorder
	// sleep 0.3 INPUT: the inputs add no time.
	r, err := New(Config{Command: []string{"sleep", "0.3"}, Input: input.Args([]string{"0", "0.0", "0.00", "0.000"}),
		Jobs: 3, Observer: &rec, Memory: admit.SamplerFor(memFixture(t, 1, ""), 1), Admit: admit.Config{Settle: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if err != nil || sum.Succeeded != 4 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	most, spans := maxRunning(&rec)
	if len(spans) != 4 || spans[1].start.Before(spans[0].end.Add(-20*time.Millisecond)) || most != 3 {
		t.Errorf("attempts %+v, at most %d at once: want the first alone, then 3 at once", spans, most)
	}
	if sum.MemoryBound != "" {
		t.Errorf("MemoryBound %q: slow start is not memory binding", sum.MemoryBound)
	}
}

// TestAdmissionPressure: on cgroup v2 (a fixture) with PSI some avg10 of
// 50%, jobs are added to a running one only once the pressure eases: they
// run one at a time while it stays, and the summary says memory bound 1
// of 2 jobs by pressure.
func TestAdmissionPressure(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sleep")
	}
	const high = "some avg10=50.00 avg60=10.00 avg300=1.00 total=1000\nfull avg10=5.00 avg60=1.00 avg300=0.00 total=100\n"
	dir := memFixture(t, 2, high)
	var rec recorder
	r, err := New(Config{Command: []string{"sleep", "0.2"}, Input: input.Args([]string{"0", "0.0", "0.00"}),
		Jobs: 2, Observer: &rec, Memory: admit.SamplerFor(dir, 2)})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if err != nil || sum.Succeeded != 3 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	if most, spans := maxRunning(&rec); most != 1 {
		t.Errorf("attempts %+v: %d at once under memory pressure, want 1", spans, most)
	}
	if !strings.HasPrefix(sum.MemoryBound, "memory bound 1 of 2 jobs: memory pressure: PSI some avg10 50.00% > 20%") ||
		!strings.Contains(sum.String(), "; memory bound 1 of 2 jobs") {
		t.Errorf("MemoryBound %q, summary %q", sum.MemoryBound, sum)
	}
}
