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

	"github.com/ration-run/ration/internal/memory"
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
	log := filepath.Join(t.TempDir(), "log")
	script := `case {} in
	big) ` + stamped(log, "big", `sh -c 'touch `+dir+`/k-$(date +%s%N); kill -9 $$'`) + ` ;;
	slow) ` + stamped(log, "slow", "sleep 1") + ` ;;
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
	// Big's second start must come after slow's end.
	_, order := maxRunning(t, log)
	if got := strings.Join(order, ", "); !strings.HasSuffix(got, "E slow, S big, E big") || strings.Count(got, "S big") != 2 {
		t.Errorf("stamps %s: want big's second attempt after slow ended", got)
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

// stamped wraps the shell command cmd of job name so that it appends "S
// name NANOS" to the file log when it starts and "E name NANOS" when it
// ends (unless it is killed), from the job itself.
func stamped(log, name, cmd string) string {
	return `echo "S ` + name + ` $(date +%s%N)" >> ` + log + `; ` + cmd + `; st=$?; echo "E ` + name + ` $(date +%s%N)" >> ` + log + `; exit $st`
}

// maxRunning reads a log of stamped jobs: the largest number of jobs that
// ran at once (a job killed before its end stamp counts as ended when it
// starts again) and the stamps in time order ("S name", "E name").
func maxRunning(t *testing.T, log string) (most int, order []string) {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	type stamp struct {
		start bool
		name  string
		ns    string
	}
	var st []stamp
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("log line %q", line)
		}
		st = append(st, stamp{f[0] == "S", f[1], f[2]})
	}
	// Same-length decimal nanoseconds sort as numbers.
	slices.SortStableFunc(st, func(a, b stamp) int { return strings.Compare(a.ns, b.ns) })
	running := map[string]bool{}
	for _, x := range st {
		if !x.start {
			delete(running, x.name)
			order = append(order, "E "+x.name)
			continue
		}
		running[x.name] = true
		most = max(most, len(running))
		order = append(order, "S "+x.name)
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
	log := filepath.Join(t.TempDir(), "log")
	// The first job (the only one started) runs 0.3 s; the others wait
	// until all four have started, or 10 s, so that "3 at once" does not
	// depend on three processes starting within 0.3 s on a loaded
	// machine. A wrong admission still shows: fewer than 3 then run at
	// once (the wait times out), or more than 1 at first.
	barrier := `if [ "$(grep -c '^S' ` + log + `)" -eq 1 ]; then sleep 0.3; else i=0; ` +
		`while [ "$(grep -c '^S' ` + log + `)" -lt 4 ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; fi`
	r, err := New(Config{Command: []string{"sh", "-c", stamped(log, "{}", barrier)}, Input: input.Args([]string{"a", "b", "c", "d"}),
		Jobs: 3, Observer: &rec, Memory: memory.SamplerFor(memFixture(t, 1, ""), 1), Admit: memory.Config{Settle: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if err != nil || sum.Succeeded != 4 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	most, order := maxRunning(t, log)
	if len(order) != 8 || order[1] != "E"+order[0][1:] || most != 3 {
		t.Errorf("stamps %v, at most %d at once: want the first job alone, then 3 at once", order, most)
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
	log := filepath.Join(t.TempDir(), "log")
	r, err := New(Config{Command: []string{"sh", "-c", stamped(log, "{}", "sleep 0.2")}, Input: input.Args([]string{"a", "b", "c"}),
		Jobs: 2, Observer: &rec, Memory: memory.SamplerFor(dir, 2)})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if err != nil || sum.Succeeded != 3 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	if most, order := maxRunning(t, log); most != 1 {
		t.Errorf("jobs %v: %d at once under memory pressure, want 1", order, most)
	}
	if !strings.HasPrefix(sum.MemoryBound, "memory bound 1 of 2 jobs: memory pressure: PSI some avg10 50.00% > 20%") ||
		!strings.Contains(sum.String(), "; memory bound 1 of 2 jobs") {
		t.Errorf("MemoryBound %q, summary %q", sum.MemoryBound, sum)
	}
}

// TestAdmissionRSSOnlyOwnCgroup: the running jobs' RSS counts only the
// processes of the memory cgroup (its cgroup.procs): a process of a job's
// group that is elsewhere is neither charged to the limit nor read. (The
// sampler used to read every process in /proc, which on a shared host
// held other runs' exiting processes' memory for the length of each read.)
func TestAdmissionRSSOnlyOwnCgroup(t *testing.T) {
	dir := memFixture(t, 1, "")
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proc := t.TempDir()
	stat := func(pid, pgrp, pages string) {
		d := filepath.Join(proc, pid)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		// pid (comm) state ppid pgrp ... rss is field 24.
		line := pid + " (job) S 1 " + pgrp + strings.Repeat(" 0", 18) + " " + pages + strings.Repeat(" 0", 27) + "\n"
		if err := os.WriteFile(filepath.Join(d, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stat("100", "100", "1000") // the job's leader, in the cgroup
	stat("200", "100", "5000") // a process of its group in another cgroup
	a := newAdmission(Config{Memory: memory.SamplerFor(dir, 1)})
	a.proc = proc
	a.sample([]int{100}, time.Now())
	if got, want := a.rss[100], int64(1000*os.Getpagesize()); got != want {
		t.Errorf("job 100's RSS = %d bytes, want %d (its process in the cgroup only)", got, want)
	}
}
