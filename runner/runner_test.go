package runner

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/pool"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/joblog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The forking thread lives as long as the process (package pdeath).
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/ration-run/ration/internal/pdeath.loop"))
}

// The shared test helpers, under the names these tests use.
type (
	syncBuf  = testutil.Buffer
	recorder = testutil.Recorder
)

func run(t *testing.T, cfg Config) (Summary, string, *recorder, error) {
	t.Helper()
	var out syncBuf
	rec := &recorder{}
	cfg.Stdout, cfg.Stderr, cfg.Observer = &out, &out, rec
	if cfg.Jobs == 0 {
		cfg.Jobs = 3
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	return sum, out.String(), rec, err
}

func nums(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return s
}

func TestRunEveryJobOnce(t *testing.T) {
	sum, out, rec, err := run(t, Config{Command: []string{"echo", "x{}"}, Input: input.Args(nums(50))})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(out)
	slices.Sort(lines)
	want := make([]string, 50)
	for i := range want {
		want[i] = "x" + strconv.Itoa(i+1)
	}
	slices.Sort(want)
	if !slices.Equal(lines, want) {
		t.Errorf("output %q", lines)
	}
	if sum.Succeeded != 50 || sum.Failed != 0 || !sum.InputDone {
		t.Errorf("summary %+v", sum)
	}
	if n, m := len(rec.Kind(event.JobStarted)), len(rec.Kind(event.JobFinished)); n != 50 || m != 50 {
		t.Errorf("%d started, %d finished events", n, m)
	}
	for _, e := range rec.Kind(event.JobFinished) {
		if e.Slot < 1 || e.Slot > 3 || e.PID == 0 || e.PeakRSS <= 0 || e.Outcome != event.Succeeded {
			t.Errorf("finished event %+v", e)
		}
	}
}

func TestKeepOrderWithRandomLengths(t *testing.T) {
	in := nums(30)
	sum, out, _, err := run(t, Config{Command: []string{"sh", "-c", `sleep 0.0$(( $1 * 7 % 10 )); echo "$1"; echo "err$1" >&2`, "sh"},
		Input: input.Args(in), KeepOrder: true, Jobs: 4})
	if err != nil || sum.Succeeded != 30 {
		t.Fatal(sum, err)
	}
	var want strings.Builder
	for _, s := range in {
		fmt.Fprintf(&want, "%s\nerr%s\n", s, s)
	}
	if out != want.String() {
		t.Errorf("out of order:\n%s", out)
	}
}

// TestGroupedOutput checks that a job's output is never cut by another
// job's, also when it is large enough to be spilled to a file.
func TestGroupedOutput(t *testing.T) {
	tmp := t.TempDir()
	_, out, _, err := run(t, Config{
		Command: []string{"sh", "-c", `i=0; while [ $i -lt 300 ]; do echo "$1$1$1$1$1$1$1$1"; i=$((i+1)); done`, "sh"},
		Input:   input.Args([]string{"a", "b", "c", "d", "e", "f"}), Jobs: 6, SpillBytes: 1000, TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1800 {
		t.Fatalf("%d lines", len(lines))
	}
	for i := 0; i < len(lines); i += 300 {
		for _, l := range lines[i : i+300] {
			if l != lines[i] {
				t.Fatalf("line %d %q inside the block of %q", i, l, lines[i])
			}
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func TestLineBuffer(t *testing.T) {
	_, out, _, err := run(t, Config{Command: []string{"sh", "-c", `printf 'a%s\nb' "$1"; sleep 0.1; printf '%s\n' "$1"`, "sh"},
		Input: input.Args([]string{"1", "2"}), LineBuffer: true})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	slices.Sort(lines)
	if !slices.Equal(lines, []string{"a1", "a2", "b1", "b2"}) {
		t.Errorf("got %q", out)
	}
	// The last line, without its newline, is printed when the job ends.
	_, out, _, _ = run(t, Config{Command: []string{"printf", "x\ny{#}"}, Input: input.Args([]string{""}), LineBuffer: true})
	if out != "x\ny1" {
		t.Errorf("got %q", out)
	}
}
func TestRetries(t *testing.T) {
	dir := t.TempDir()
	cnt := filepath.Join(dir, "n")
	// Fails twice, then succeeds.
	script := `echo x >> ` + cnt + `; echo try; [ $(wc -l < ` + cnt + `) -ge 3 ]`
	sum, out, rec, err := run(t, Config{Command: []string{"sh", "-c", script}, Input: input.Args([]string{"1"}), Retries: 3})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Succeeded != 1 || len(rec.Kind(event.JobRetried)) != 2 || out != "try\n" {
		t.Errorf("summary %+v, retried %d, out %q", sum, len(rec.Kind(event.JobRetried)), out)
	}
	os.Remove(cnt)
	sum, _, _, _ = run(t, Config{Command: []string{"false"}, Input: input.Args([]string{"1"}), Retries: 2})
	if sum.Failed != 1 {
		t.Errorf("summary %+v", sum)
	}
}

func TestHaltNow(t *testing.T) {
	sum, _, rec, _ := run(t, Config{Command: []string{"sh", "-c", `[ "$1" = 1 ] && exit 3; sleep 30`, "sh"},
		Input: input.Args(nums(100)), Jobs: 3, Halt: Halt{When: HaltNow, On: HaltOnFail, Count: 1}, Grace: time.Second})
	if sum.Failed != 1 || !sum.Halted || sum.Succeeded != 0 {
		t.Errorf("summary %+v", sum)
	}
	if n := len(rec.Kind(event.JobStarted)); n > 4 {
		t.Errorf("%d jobs started after the halt", n)
	}
	if sum.Killed+sum.Failed+sum.NotStarted != int64(len(rec.Kind(event.JobFinished))) {
		t.Errorf("summary %+v does not add up to %d finished events", sum, len(rec.Kind(event.JobFinished)))
	}
}

func TestStartFailure(t *testing.T) {
	sum, out, rec, _ := run(t, Config{Command: []string{"/nonexistent/cmd"}, Input: input.Args([]string{"1"})})
	fin := rec.Kind(event.JobFinished)
	if sum.Failed != 1 || len(fin) != 1 || fin[0].ExitCode != 127 || !strings.Contains(out, "/nonexistent/cmd") {
		t.Errorf("summary %+v, events %+v, out %q", sum, fin, out)
	}
}

func TestDrain(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	var out syncBuf
	// Drain once 4 jobs have started processes.
	var started atomic.Int32
	allStarted := make(chan struct{})
	obs := event.Func(func(e event.Event) {
		if e.Kind == event.JobStarted && e.PID != 0 && started.Add(1) == 4 {
			close(allStarted)
		}
	})
	r, err := New(Config{Command: []string{"sh", "-c", `[ "$1" -le 2 ] && sleep 0.3 && exit 0; sleep 60`, "sh"},
		Input: input.Args(nums(20)), Jobs: 4, Joblog: log, TermTimeout: time.Second, Grace: 200 * time.Millisecond,
		Stdout: &out, Stderr: &out, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-allStarted
		r.Drain()
	}()
	sum, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Succeeded != 2 || sum.Killed != 2 || !sum.Interrupted || sum.InputDone {
		t.Errorf("summary %+v", sum)
	}
	f, _ := os.Open(log)
	defer f.Close()
	var seqs []int64
	for e, err := range joblog.Entries(f) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
	}
	slices.Sort(seqs)
	if !slices.Equal(seqs, []int64{1, 2}) {
		t.Errorf("joblog records %v, want the two jobs that finished", seqs)
	}
}

func TestResume(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	// First run: odd inputs fail.
	cmd := []string{"sh", "-c", `echo "$1"; [ $(($1 % 2)) = 0 ] || [ -e ` + filepath.Join(dir, "fixed") + ` ]`, "sh"}
	sum, _, _, _ := run(t, Config{Command: cmd, Input: input.Args(nums(10)), Joblog: log})
	if sum.Failed != 5 {
		t.Fatalf("summary %+v", sum)
	}
	// --resume runs nothing: all ended.
	sum, out, _, _ := run(t, Config{Command: cmd, Input: input.Args(nums(10)), Joblog: log, Resume: true})
	if sum.Skipped != 10 || out != "" {
		t.Errorf("resume: summary %+v, out %q", sum, out)
	}
	// --resume-failed re-runs the odd ones.
	os.WriteFile(filepath.Join(dir, "fixed"), nil, 0o644)
	sum, out, _, _ = run(t, Config{Command: cmd, Input: input.Args(nums(10)), Joblog: log, ResumeFailed: true})
	got := strings.Fields(out)
	slices.Sort(got)
	if sum.Skipped != 5 || sum.Succeeded != 5 || !slices.Equal(got, []string{"1", "3", "5", "7", "9"}) {
		t.Errorf("resume-failed: summary %+v, out %q", sum, out)
	}
}

func TestShardsPartition(t *testing.T) {
	in := nums(1000)
	seen := make(map[string]int)
	for i := range 3 {
		_, out, _, err := run(t, Config{Command: []string{"echo"}, Input: input.Args(in), DryRun: true, Shard: Shard{Index: i, Count: 3}})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			seen[strings.TrimPrefix(l, "echo ")]++
		}
	}
	if len(seen) != 1000 {
		t.Errorf("%d inputs covered", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s in %d shards", k, n)
		}
	}
}

func TestResize(t *testing.T) {
	rec := &recorder{}
	r, err := New(Config{Command: []string{"true"}, Input: input.Args(nums(5)), Jobs: 1, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	r.Resize(3, "test")
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := rec.Kind(event.PoolResized)
	if len(ev) != 1 || ev[0].Size != 3 || ev[0].Reason != "test" {
		t.Errorf("events %+v", ev)
	}
}

func TestInputError(t *testing.T) {
	bad := func(yield func(string, error) bool) {
		if yield("1", nil) {
			yield("", errors.New("disk on fire"))
		}
	}
	sum, _, _, err := run(t, Config{Command: []string{"true"}, Input: bad})
	if !errors.Is(err, ErrInput) || sum.Succeeded != 1 || sum.InputDone {
		t.Errorf("summary %+v, err %v", sum, err)
	}
}

// TestHaltTriggered: fail=20% with the number of jobs unknown halts at 2
// failures of 10 finished jobs (HaltMinJobs), not at 1 of 4.
func TestHaltTriggered(t *testing.T) {
	h := Halt{When: HaltSoon, On: HaltOnFail, Percent: 20}
	if h.triggered(1, 3) || !h.triggered(2, 8) {
		t.Errorf("%+v: triggered(1, 3) = %v, triggered(2, 8) = %v; want false, true", h, h.triggered(1, 3), h.triggered(2, 8))
	}
}

func TestRSSHist(t *testing.T) {
	var h rssHist
	for i := int64(1); i <= 100; i++ {
		h.add(i << 20)
	}
	p := h.quantile(0.95)
	if p < 95<<20 || p > 95<<20*5/4 {
		t.Errorf("p95 = %d MiB", p>>20)
	}
	for v := int64(1); v < 1<<40; v = v*3 + 1 {
		if b := rssBucket(v); rssUpper(b) < v || (b > 0 && rssUpper(b-1) >= v) {
			t.Fatalf("bucket %d of %d: upper %d", b, v, rssUpper(b))
		}
	}
}

func TestFNVMatchesStdlib(t *testing.T) {
	for _, s := range []string{"", "a", "src/main.go", "\xff\x00x", strings.Repeat("ab", 1000)} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got := fnv1a64(s); got != h.Sum64() {
			t.Errorf("%q: %x, want %x", s, got, h.Sum64())
		}
	}
	// Fixed values: the shard rule is a published contract.
	if (Shard{Index: 0, Count: 3}).Contains("a") != (0xaf63dc4c8601ec8c%3 == 0) {
		t.Error("shard of \"a\" changed")
	}
}

// TestNewErrors: New's errors are plain and name the Config field, not a
// flag of the CLI.
func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no command"},
		{Config{Command: []string{"true"}, Resume: true}, "need Joblog"},
		{Config{Command: []string{"true"}, Retries: -1}, "negative"},
		{Config{Command: []string{"true"}, Shard: Shard{Index: 3, Count: 3}}, "Shard 3/3"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "--") {
			t.Errorf("New(%+v) = %v, want an error about %q without flag names", tc.cfg, err, tc.want)
		}
	}
}

// TestKeepOrderLineBuffer: KeepOrder with LineBuffer (-k --line-buffer,
// which ration refused) prints every job whole and in input order, the
// job first in order line by line as it writes: with unfinished lines,
// retries (a failed attempt prints nothing) and jobs a joblog skips
// (--resume-failed), whose places the order passes over.
func TestKeepOrderLineBuffer(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	cmd := []string{"sh", "-c", `m=` + dir + `/m$1; [ $(($1 % 3)) = 0 ] && [ ! -e $m ] && { touch $m; exit 1; }
		printf "$1-a "; sleep 0.0$(( $1 * 7 % 10 )); echo "$1-b"; printf "$1-c"`, "sh"}
	in := nums(40)
	// A joblog of a first run of cmd that recorded 5, 10, ... as done,
	// the others as failed.
	jl, err := joblog.Create(log, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range in {
		exit := 1
		if n, _ := strconv.Atoi(s); n%5 == 0 {
			exit = 0
		}
		if err := jl.Write(joblog.Entry{Seq: int64(i + 1), Exitval: exit, Command: template.Join(append(cmd, s))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := jl.Close(); err != nil {
		t.Fatal(err)
	}
	sum, out, _, err := run(t, Config{Command: cmd, Input: input.Args(in), KeepOrder: true, LineBuffer: true, Jobs: 4,
		Retries: 2, Joblog: log, ResumeFailed: true})
	if err != nil || sum.Succeeded != 32 || sum.Skipped != 8 {
		t.Fatal(sum, err)
	}
	var want strings.Builder
	for _, s := range in {
		if n, _ := strconv.Atoi(s); n%5 != 0 {
			fmt.Fprintf(&want, "%s-a %s-b\n%s-c", s, s, s)
		}
	}
	if out != want.String() {
		t.Errorf("got\n%q\nwant\n%q", out, want.String())
	}
}

// TestKeepOrderWindow: with -k, the jobs behind a slow first job are
// bounded by the window README and docs/reliability.md state: Jobs+5 jobs
// start (the head included) and no more until the head ends. The head
// waits until the whole window has started, then a little longer, and
// records how many had started; a larger window would show there.
func TestKeepOrderWindow(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	const jobs, window = 2, 2 + pool.PullSlack
	script := `echo "$1" >> "$2"
if [ "$1" = 1 ]; then
  i=0; while [ "$(wc -l < "$2")" -lt ` + strconv.Itoa(window) + ` ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done
  sleep 0.3; wc -l < "$2" > "$2.head"
fi`
	sum, _, _, err := run(t, Config{Command: []string{"sh", "-c", script, "sh", "{}", started},
		Input: input.Args(nums(30)), KeepOrder: true, Jobs: jobs})
	if err != nil || sum.Succeeded != 30 {
		t.Fatal(sum, err)
	}
	b, err := os.ReadFile(started + ".head")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); n != window {
		t.Errorf("%d jobs started while the first ran; want the window, %d (Jobs+%d)", n, window, pool.PullSlack)
	}
}
