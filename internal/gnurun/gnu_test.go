package gnurun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/joblog"
)

// gnuArgs opens ::: groups as gnuinput.Open does for the CLI.
func gnuArgs(t *testing.T, opts gnuinput.Options, groups ...[]string) gnuinput.ArgSeq {
	t.Helper()
	var srcs []gnuinput.Source
	for _, g := range groups {
		srcs = append(srcs, gnuinput.Source{Name: ":::", Values: input.Args(g)})
	}
	in, err := gnuinput.Open(srcs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	return in.All()
}

func sortedLines(s string) []string {
	l := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(l)
	return l
}

// TestGNUProductAndPositions: every combination of two sources runs once,
// with {1} and {2} its fields.
func TestGNUProductAndPositions(t *testing.T) {
	sum, out, _, err := run(t, with(runner.Config{Command: []string{"echo", "{2}-{1}"}}, GNU{Args: gnuArgs(t, gnuinput.Options{}, []string{"a", "b"}, []string{"x", "y"})}))
	if err != nil || sum.Succeeded != 4 {
		t.Fatalf("%+v %v", sum, err)
	}
	if got, want := sortedLines(out), []string{"x-a", "x-b", "y-a", "y-b"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestGNUBatchesJoblog: with -n2 a job takes two arguments and its joblog
// Seq is the batch's number; with one argument per job it stays the
// input's number under a shard, as joblogs written before batches hold.
func TestGNUBatchesJoblog(t *testing.T) {
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	_, out, _, err := run(t, with(runner.Config{Command: []string{"echo"}, Jobs: 1, KeepOrder: true, Joblog: jl}, GNU{Args: gnuArgs(t, gnuinput.Options{}, nums(5)), Batch: gnuinput.BatchOptions{MaxArgs: 2}}))
	if err != nil || out != "1 2\n3 4\n5\n" {
		t.Fatalf("out %q, %v", out, err)
	}
	rec, err := joblog.Load(jl)
	if err != nil {
		t.Fatal(err)
	}
	for seq := int64(1); seq <= 3; seq++ {
		if !rec.Succeeded(seq) {
			t.Errorf("batch %d not recorded", seq)
		}
	}
	if rec.Ended(4) {
		t.Error("a batch 4 was recorded")
	}

	shard := runner.Shard{Index: 1, Count: 3}
	var want []string
	for _, n := range nums(30) {
		if shard.Contains(n) {
			want = append(want, n+" "+n)
		}
	}
	_, out, _, err = run(t, runner.Config{Command: []string{"echo", "{#}", "{}"}, Shard: shard, Input: input.Args(nums(30))})
	if got := sortedLines(out); err != nil || !slices.Equal(got, sortedLines(strings.Join(want, "\n"))) {
		t.Errorf("shard jobs %q, want %q (%v)", got, want, err)
	}
}

// TestGNUNoFields: -N0 runs the command as written once per argument.
func TestGNUNoFields(t *testing.T) {
	sum, out, _, err := run(t, with(runner.Config{Command: []string{"echo", "hi"}, Input: input.Args(nums(3))}, GNU{NoFields: true, Batch: gnuinput.BatchOptions{MaxArgs: 1}}))
	if err != nil || sum.Succeeded != 3 || out != "hi\nhi\nhi\n" {
		t.Errorf("%+v %q %v", sum, out, err)
	}
}

// TestGNUTag: --tag and --tagstring prefix every line, the last one
// without a newline included, and stderr's too.
func TestGNUTag(t *testing.T) {
	_, out, _, err := run(t, with(runner.Config{Command: []string{"sh", "-c", `printf 'l1\nl2' ; echo e >&2`, "sh"}, Jobs: 1, KeepOrder: true}, GNU{Args: gnuArgs(t, gnuinput.Options{}, []string{"a"}, []string{"b"}), Tag: true}))
	if err != nil || !strings.Contains(out, "a b\tl1\na b\tl2") || !strings.Contains(out, "a b\te\n") {
		t.Errorf("--tag: %q %v", out, err)
	}
	_, out, _, err = run(t, with(runner.Config{Command: []string{"echo", "x"}, Input: input.Args([]string{"p/q.r"})}, GNU{TagString: "<{/.}:{#}>", Tag: true}))
	if err != nil || out != "<q:1>\tx p/q.r\n" {
		t.Errorf("--tagstring: %q %v", out, err)
	}
	_, out, _, err = run(t, with(runner.Config{Command: []string{"echo", "x"}, Input: input.Args([]string{"a"})}, GNU{TagString: "T", Tag: true}))
	if err != nil || out != "T\tx a\n" {
		t.Errorf("literal --tagstring: %q %v", out, err)
	}
}

// TestGNUTagCarriageReturn: --tag tags what follows a carriage return as
// it tags a new line, as GNU parallel 20221122 does (its tag goes after
// every \r or \n followed by more output, so a progress line redrawn with
// \r keeps its tag, and a CRLF gets one between \r and \n): GNU's
// output for printf 'a\rb\r\nc' is "x\ta\rx\tb\rx\t\nx\tc". ration
// tagged after \n only, in group and line mode.
func TestGNUTagCarriageReturn(t *testing.T) {
	for _, line := range []bool{false, true} {
		for _, redirect := range []string{"", ">&2"} {
			_, out, _, err := run(t, with(runner.Config{Command: []string{"sh", "-c", `printf 'a\rb\r\nc' ` + redirect, "sh"},
				Input: input.Args([]string{"x"}), LineBuffer: line}, GNU{Tag: true}))
			if want := "x\ta\rx\tb\rx\t\nx\tc"; err != nil || out != want {
				t.Errorf("line mode %v, %q: %q (%v), want %q", line, redirect, out, err, want)
			}
		}
	}
}

// TestGNUResults: --results writes GNU parallel's layout, with --header's
// names, escapes / and \, and prints nothing.
func TestGNUResults(t *testing.T) {
	dir := t.TempDir()
	_, out, _, err := run(t, with(runner.Config{Command: []string{"sh", "-c", `echo out $1 $2; echo err $1 $2 >&2`, "sh"}}, GNU{Args: gnuArgs(t, gnuinput.Options{}, []string{"a/b", `c\d`}, []string{"x"}), Results: dir}))
	if err != nil || out != "" {
		t.Fatalf("out %q, %v", out, err)
	}
	for _, c := range []struct{ path, body string }{
		{"1/a\\_b/2/x/stdout", "out a/b x\n"},
		{"1/a\\_b/2/x/stderr", "err a/b x\n"},
		{"1/a\\_b/2/x/seq", "1"}, // no newline, as GNU parallel's
		{`1/c\\d/2/x/stdout`, `out c\d x` + "\n"},
	} {
		b, err := os.ReadFile(filepath.Join(dir, c.path))
		if err != nil || string(b) != c.body {
			t.Errorf("%s: %q %v, want %q", c.path, b, err, c.body)
		}
	}
	if got := gnu.ResultsDir("R", []gnuinput.Arg{{"1", "2"}}, []string{"f1", ""}); got != filepath.Join("R", "f1", "1", "2", "2") {
		t.Errorf("header names: %s", got)
	}
}

// TestGNUVerbose: -v prints the command on stdout before the output, -t
// on stderr.
func TestGNUVerbose(t *testing.T) {
	var out, errb syncBuf
	r, err := runner.New(with(runner.Config{Command: []string{"echo", "{}"}, Input: input.Args([]string{"a b"}), Jobs: 1, Stdout: &out, Stderr: &errb}, GNU{Verbose: true, VerboseStderr: true}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "echo 'a b'\na b\n" || errb.String() != "echo 'a b'\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
	}
}

// TestGNUInputIsCommand: without a command each input is a shell command
// line.
func TestGNUInputIsCommand(t *testing.T) {
	_, out, _, err := run(t, with(runner.Config{Command: []string{"{}"}, Jobs: 1, KeepOrder: true, Input: input.Args([]string{"echo a | tr a b", "echo $((1+2))"})}, GNU{InputIsCommand: true}))
	if err != nil || out != "b\n3\n" {
		t.Errorf("%q %v", out, err)
	}
}

// TestGNUDelay: --delay spaces the job starts.
func TestGNUDelay(t *testing.T) {
	start := time.Now()
	_, _, rec, err := run(t, with(runner.Config{Command: []string{"true"}, Input: input.Args(nums(3))}, GNU{Delay: 100 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	starts := rec.Kind(event.JobStarted)
	if len(starts) != 3 || time.Since(start) < 200*time.Millisecond {
		t.Errorf("%d starts in %v", len(starts), time.Since(start))
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Time.Sub(starts[i-1].Time); d < 90*time.Millisecond {
			t.Errorf("start %d came %v after the one before", i+1, d)
		}
	}
}

// TestGNUShellPath: --shell runs the script with Template.ShellPath.
func TestGNUShellPath(t *testing.T) {
	_, out, _, err := run(t, with(runner.Config{Command: []string{"echo", "$0"}, Shell: true, Input: input.Args([]string{"a"})}, GNU{Template: template.Options{ShellPath: "/bin/sh"}}))
	if err != nil || out != "/bin/sh a\n" {
		t.Errorf("%q %v", out, err)
	}
}

// TestGNUTimeoutPercentFloor: --timeout 300% of a median of a few
// milliseconds does not stop a job of 0.3 s: the limit is never below
// 1 s (it stopped it, and under load even an echo, before).
func TestGNUTimeoutPercentFloor(t *testing.T) {
	sum, _, _, err := run(t, with(runner.Config{Command: []string{"sleep"}, Jobs: 1, Input: input.Args([]string{"0.001", "0.001", "0.001", "0.3"})}, GNU{TimeoutPercent: 300}))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Succeeded != 4 || sum.Failed != 0 {
		t.Errorf("summary %+v, want all 4 succeeded", sum)
	}
}

// TestGNUTimeoutPercent: --timeout 300% stops a job running longer than 3
// times the median runtime of the succeeded jobs; before one succeeded
// there is no limit.
func TestGNUTimeoutPercent(t *testing.T) {
	sum, _, rec, err := run(t, with(runner.Config{Command: []string{"sleep"}, Jobs: 1, Input: input.Args([]string{"0.3", "0.05", "0.05", "0.05", "5"})}, GNU{TimeoutPercent: 300}))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Succeeded != 4 || sum.Failed != 1 {
		t.Errorf("summary %+v, want 4 succeeded (the first, slow one had no limit yet) and 1 stopped", sum)
	}
	for _, e := range rec.Kind(event.JobFinished) {
		if e.Seq == 5 && (e.Cause != event.CauseTimeout || e.Duration > 2*time.Second) {
			t.Errorf("the slow job ended %v after %v, want a timeout near 3 x the median", e.Cause, e.Duration)
		}
		// The error says the limit the percentage made (it said "after
		// 0s", Config.Timeout).
		if e.Seq == 5 && (!errors.Is(e.Err, runner.ErrTimeout) || !strings.Contains(fmt.Sprint(e.Err), "300% of the succeeded jobs' median runtime") || strings.Contains(fmt.Sprint(e.Err), "after 0s")) {
			t.Errorf("the slow job's error %q does not say the limit of --timeout 300%%", e.Err)
		}
	}
}

// TestGNUSlotVar: every job sees its slot less one in $PARALLEL_JOBSLOT0,
// as GNU parallel 20221122 sets it, or in the variable GNUExec.SlotVar
// names (--process-slot-var), once, in place of an inherited one.
func TestGNUSlotVar(t *testing.T) {
	t.Setenv("name", "inherited")
	t.Setenv("PARALLEL_JOBSLOT0", "inherited")
	script := `echo "$PARALLEL_JOBSLOT0|$name|$(env | grep -c '^name=')|$(env | grep -c '^PARALLEL_JOBSLOT0=')"`
	for _, c := range []struct{ slotVar, want string }{
		{"", "0|inherited|1|1\n1|inherited|1|1\n"},
		{"name", "inherited|0|1|1\ninherited|1|1|1\n"},
	} {
		_, out, _, err := run(t, with(runner.Config{Command: []string{"sh", "-c", script}, Input: input.Args([]string{"a", "b"}),
			Jobs: 2, KeepOrder: true}, GNU{Exec: GNUExec{SlotVar: c.slotVar}}))
		if err != nil || out != c.want {
			t.Errorf("SlotVar %q: got %q, %v; want %q", c.slotVar, out, err, c.want)
		}
	}
}
