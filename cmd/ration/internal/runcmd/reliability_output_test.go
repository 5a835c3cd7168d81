//go:build linux

package runcmd

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// TestReliabOutputGoneResumeRunsJob: when ration's stdout cannot be
// written (here a full disk: /dev/full), the job whose output was lost is
// not recorded, so the command ration prints to run the rest (--resume)
// runs it again and every job's output is delivered. It was recorded as
// failed (Exitval -1), which --resume skips: its output was lost for good.
func TestReliabOutputGoneResumeRunsJob(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{nil, {"-k"}, {"--line-buffer"}} {
		t.Run(strings.Join(append([]string{"flags"}, flags...), " "), func(t *testing.T) {
			t.Parallel()
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skip("no /dev/full:", err)
			}
			defer full.Close()
			dir := t.TempDir()
			jl := filepath.Join(dir, "jl")
			args := append(append([]string{"run", "-j", "1", "--joblog", jl}, flags...), "--", "echo", ":::", "a", "b", "c")
			r := rcmd{dir: dir, stdout: full, args: args}.run(t)
			if r.code == 0 || !strings.Contains(r.stderr, "to run the rest: ration run --resume") {
				t.Fatalf("exit %d, want an error and the --resume hint:\n%s", r.code, r.stderr)
			}
			r = rcmd{dir: dir, args: append([]string{"run", "--resume"}, args[1:]...)}.run(t)
			if r.code != 0 || r.stdout != "a\nb\nc\n" {
				t.Errorf("--resume: exit %d, stdout %q, want every job's output:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestReliabOutputFilesCannotBeMade: a job whose --results or --files
// files cannot be made does not run and fails, so that neither the exit
// status nor --resume takes it for done, as in GNU parallel; once the
// files can be made, --resume-failed runs it. The job ran with its output
// on the terminal instead, and was recorded as succeeded (exit 0).
func TestReliabOutputFilesCannotBeMade(t *testing.T) {
	t.Parallel()
	t.Run("results", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		res, jl := filepath.Join(dir, "res"), filepath.Join(dir, "jl")
		if err := os.WriteFile(res, nil, 0o644); err != nil { // a file where the directory must go
			t.Fatal(err)
		}
		args := []string{"run", "--joblog", jl, "--results", filepath.Join(res, "x"), "--", "echo", ":::", "a", "b"}
		r := rcmd{dir: dir, args: args}.run(t)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "--results: mkdir") {
			t.Errorf("exit %d, stdout %q, want 2 (both failed), nothing printed, and the reason:\n%s", r.code, r.stdout, r.stderr)
		}
		for seq, e := range readJoblog(t, jl) {
			if e.Succeeded() {
				t.Errorf("job %d recorded as succeeded, though it has no --results files", seq)
			}
		}
		if err := os.Remove(res); err != nil {
			t.Fatal(err)
		}
		r = rcmd{dir: dir, args: append([]string{"run", "--resume-failed"}, args[1:]...)}.run(t)
		if b, err := os.ReadFile(filepath.Join(res, "x", "1", "b", "stdout")); r.code != 0 || string(b) != "b\n" {
			t.Errorf("--resume-failed: exit %d, res/x/1/b/stdout %q (%v):\n%s", r.code, b, err, r.stderr)
		}
	})
	t.Run("files", func(t *testing.T) {
		t.Parallel()
		tmp := tmpfs(t, "64k,nr_inodes=1") // no room for a single file
		dir := t.TempDir()
		r := rcmd{dir: dir, args: []string{"run", "--tmpdir", tmp, "--output-files", "--", "echo", ":::", "a", "b"}}.run(t)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "--files: open") {
			t.Errorf("exit %d, stdout %q, want 2 (both failed), nothing printed, and the reason:\n%s", r.code, r.stdout, r.stderr)
		}
	})
}

// TestReliabResultsTableFullDisk: --results NAME.csv on a disk that fills:
// the table is left whole (the row that did not fit is cut back), the run
// stops with the reason, and every job the joblog records as succeeded
// has its row, with its whole output. The row was written after the job's
// record: the job whose row was cut off was recorded as succeeded.
func TestReliabResultsTableFullDisk(t *testing.T) {
	t.Parallel()
	disk := tmpfs(t, "16k")
	dir := t.TempDir()
	jl, table := filepath.Join(dir, "jl"), filepath.Join(disk, "t.csv")
	args := []string{"run", "-j", "1", "--joblog", jl, "--results", table, "--", "sh", "-c", `head -c 3000 /dev/zero | tr '\0' x; echo " $0"`}
	r := rcmd{dir: dir, args: append(append(args, ":::"), inputs(10)...)}.run(t)
	if r.code != exitUsage || !strings.Contains(r.stderr, "no space left on device") {
		t.Fatalf("exit %d, want 255 with the reason:\n%s", r.code, r.stderr)
	}
	f, err := os.Open(table)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("the table is torn: %v", err)
	}
	out := map[string]string{} // Seq -> Stdout
	for _, row := range rows[1:] {
		out[row[0]] = row[len(row)-2]
	}
	recs := readJoblog(t, jl)
	if len(recs) == 0 || len(recs) >= 10 {
		t.Fatalf("%d records, want some, not all, on a 16k disk", len(recs))
	}
	for seq, e := range recs {
		want := strings.Repeat("x", 3000) + fmt.Sprintf(" in-%d\n", seq)
		if e.Succeeded() && out[fmt.Sprint(seq)] != want {
			t.Errorf("job %d recorded as succeeded, but its row holds %d bytes of output, want %d", seq, len(out[fmt.Sprint(seq)]), len(want))
		}
	}
}

// TestReliabDelayEndsWhenStopped: a run waiting out --delay before its
// next job ends at once when it is stopped: by SIGTERM (exit 143, without
// the last-resort "blocked" exit of the hatch) and by --halt. It waited
// out the delay: SIGTERM ended it only at the hatch, saying its input or
// output was blocked, and --halt after the whole delay.
func TestReliabDelayEndsWhenStopped(t *testing.T) {
	t.Parallel()
	t.Run("SIGTERM", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		jl := filepath.Join(dir, "jl")
		cmd, out, errb := rcmd{dir: dir, args: []string{"run", "--term-timeout", "1s", "--delay", "1h", "--joblog", jl, "--", "echo", ":::", "a", "b"}}.start(t)
		testutil.Eventually(t, 10*time.Second, "job 1 logged", func() bool { return countRecords(jl) == 1 })
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		r := waitRation(t, cmd, out, errb, 30*time.Second)
		if r.code != 128+int(syscall.SIGTERM) || strings.Contains(r.stderr, "blocked") || r.stdout != "a\n" {
			t.Errorf("exit %d, stdout %q, want 143 after job 1, not the hatch's exit:\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("halt", func(t *testing.T) {
		t.Parallel()
		cmd, out, errb := rcmd{dir: t.TempDir(), args: []string{"run", "--halt", "now,fail=1", "--delay", "1h", "--", "false", ":::", "a", "b"}}.start(t)
		// A hang guard: the halt comes with job 1, the delay would last an hour.
		if r := waitRation(t, cmd, out, errb, 30*time.Second); r.code != 1 {
			t.Errorf("exit %d, want 1 (job 1's status):\n%s", r.code, r.stderr)
		}
	})
}

// TestReliabDryRunBrokenPipe: `ration run --dry-run ... | head -1` exits
// 141 (standard output closed by its reader), as a real run and GNU
// parallel do; it exited 255, as for a usage error.
func TestReliabDryRunBrokenPipe(t *testing.T) {
	t.Parallel()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd, out, errb := rcmd{dir: t.TempDir(), stdout: pw, args: append([]string{"run", "--dry-run", "--", "echo", ":::"}, inputs(100000)...)}.start(t)
	pw.Close()
	if _, err := pr.Read(make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	if r := waitRation(t, cmd, out, errb, 30*time.Second); r.code != exitBrokenPipe || !strings.Contains(r.stderr, "broken pipe") {
		t.Errorf("exit %d, want 141 with a message:\n%s", r.code, r.stderr)
	}
}

// TestReliabHaltStatusOfFailedJob: --halt now,fail=1 exits with the
// status of the job that failed as its joblog record has it, as GNU
// parallel does: never 0 for a failed job. A job that failed while
// exiting 0 (its --results files could not be made) halted the run with
// status 0, and one stopped by --timeout with 143 where GNU parallel
// 20221122 exits 255 (its Exitval -1).
func TestReliabHaltStatusOfFailedJob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "res"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"no results files", []string{"--results", "res/x", "--", "echo", ":::", "a"}, 255},
		{"timeout", []string{"--timeout", "0.2", "--", "sleep", ":::", "30"}, 255},
		{"exit 7", []string{"--", "sh", "-c", "exit 7", ":::", "a"}, 7},
		{"killed from outside", []string{"--", "sh", "-c", "kill -9 $$", ":::", "a"}, 128 + 9},
	} {
		r := rcmd{dir: dir, args: append([]string{"run", "--halt", "now,fail=1"}, c.args...)}.run(t)
		if r.code != c.want {
			t.Errorf("%s: exit %d, want %d:\n%s", c.name, r.code, c.want, r.stderr)
		}
	}
}

// TestReliabPipeCatFullDisk: --pipe --cat writes each job's block to a
// file in --tmpdir; a block that does not fit (a full disk) fails its job
// without running it. The files went to $TMPDIR whatever --tmpdir said,
// and a block cut short by a full disk was a warning: its job ran on part
// of its block, or none, and was recorded as succeeded.
func TestReliabPipeCatFullDisk(t *testing.T) {
	t.Parallel()
	disk := tmpfs(t, "16k")
	dir := t.TempDir()
	// Five records of 17000 bytes, each a block of its own (a record is
	// never cut), each larger than the disk.
	in := strings.Repeat(strings.Repeat("x", 16999)+"\n", 5)
	for _, env := range [][]string{nil, {"TMPDIR=" + disk}} {
		args := []string{"run", "--pipe", "--block", "1k", "--cat", "--", "sh", "-c", "wc -c < {}"}
		if env == nil {
			args = append(args[:1], append([]string{"--tmpdir", disk}, args[1:]...)...)
		}
		r := rcmd{dir: dir, env: env, stdin: strings.NewReader(in), args: args}.run(t)
		if r.code != 5 || r.stdout != "" || !strings.Contains(r.stderr, "--cat: write") || !strings.Contains(r.stderr, "no space left on device") {
			t.Errorf("%v %v: exit %d, stdout %q, want every job failed, none run, with the reason:\n%s", env, args[1:3], r.code, r.stdout, r.stderr)
		}
	}
}
