package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
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
// SIGKILL, while the oom_kill counter rose, is OOM-killed; beside another
// running job it is re-queued without counting against Retries, until its
// third kill fails it, with the reason in its error.
func TestOOMThroughShell(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	dir, count := dirCounter(t)
	// "big": a child shell raises the counter and SIGKILLs itself; the
	// job's shell waits for it and exits 137.
	script := `case {} in
	big) sh -c 'touch ` + dir + `/k-$(date +%s%N); kill -9 $$'; exit $? ;;
	slow) sleep 1.5 ;;
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
		t.Errorf("summary %+v: want slow succeeded, big failed after OOM re-queues", sum)
	}
	want := "job_started job_retried:oom job_started job_retried:oom job_started job_finished:oom"
	if got := eventKinds(&rec, "big"); got != want {
		t.Errorf("big: events %q, want %q", got, want)
	}
	fin := rec.Kind(event.JobFinished)
	for _, e := range fin {
		if e.Input != "big" {
			continue
		}
		if e.ExitCode != 137 || !errors.Is(e.Err, ErrOOMKilled) || !strings.Contains(e.Err.Error(), "OOM-killed 3 times") {
			t.Errorf("big: exit %d, error %v; want 137 and ErrOOMKilled after 3 kills", e.ExitCode, e.Err)
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
// limit of 100 MiB, usage of 10 MiB, no OOM kill, and on v2 the given
// memory.pressure.
func memFixture(t *testing.T, version int, pressure string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"memory.usage_in_bytes": "10485760\n", "memory.limit_in_bytes": "104857600\n",
		"memory.stat": "total_inactive_file 0\ntotal_rss 10485760\ntotal_cache 0\n", "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
	}
	if version == 2 {
		files = map[string]string{
			"memory.current": "10485760\n", "memory.max": "104857600\n",
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

// maxRunning is the largest number of jobs that ran at once, from the
// events.
func maxRunning(rec *recorder) (most int, order []string) {
	n := 0
	for _, e := range rec.Events() {
		switch e.Kind {
		case event.JobStarted:
			n++
			most = max(most, n)
			order = append(order, "start "+e.Input)
		case event.JobFinished, event.JobRetried:
			n--
			order = append(order, "end "+e.Input)
		}
	}
	return most, order
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
	most, order := maxRunning(&rec)
	if len(order) < 2 || order[0] != "start 0" || order[1] != "end 0" || most != 3 {
		t.Errorf("order %v (at most %d at once): want job 1 alone, then 3 at once", order, most)
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
	if most, order := maxRunning(&rec); most != 1 {
		t.Errorf("order %v: %d at once under memory pressure, want 1", order, most)
	}
	if !strings.HasPrefix(sum.MemoryBound, "memory bound 1 of 2 jobs: memory pressure: PSI some avg10 50.00% > 20%") ||
		!strings.Contains(sum.String(), "; memory bound 1 of 2 jobs") {
		t.Errorf("MemoryBound %q, summary %q", sum.MemoryBound, sum)
	}
}
