//go:build linux

package runcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/internal/testutil"
)

// Issue 16, items 1-8: data lost or duplicated.

// TestReliabTornJoblogRunsAgain (item 1): a joblog whose last record was
// cut off by a crash: --resume cuts it off, says so, and runs its job
// again; the next record does not merge into it.
func TestReliabTornJoblogRunsAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl, out := filepath.Join(dir, "jl"), filepath.Join(dir, "out")
	// Job 1's record holds the command its job ran: --resume matches a
	// record to its job by command.
	torn := "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n" +
		"1\t:\t1795216618.196\t     0.000\t0\t5\t0\t0\t" + template.Join(append(appendJob(out), "in-1")) + "\n" +
		"2\t:\t1795216618.2" // job 2's record, cut off
	if err := os.WriteFile(jl, []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "-j", "1", "--joblog", jl, "--resume", "--"}, appendJob(out)...)
	args = append(args, append([]string{":::"}, inputs(3)...)...)
	r := rcmd{dir: dir, args: args}.run(t)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "cut off") {
		t.Errorf("no warning about the torn record:\n%s", r.stderr)
	}
	if got := lineCounts(t, out); got["in-1"] != 0 || got["in-2"] != 1 || got["in-3"] != 1 {
		t.Errorf("jobs run: %v, want in-2 and in-3 once", got)
	}
	recs := readJoblog(t, jl)
	for seq := int64(1); seq <= 3; seq++ {
		if e, ok := recs[seq]; !ok || !e.Succeeded() {
			t.Errorf("joblog: job %d: %+v, %v", seq, e, ok)
		}
	}
	// Nothing is left to run.
	r = rcmd{dir: dir, args: args}.run(t)
	if got := lineCounts(t, out); r.code != 0 || got["in-2"] != 1 || got["in-3"] != 1 {
		t.Errorf("second resume: exit %d, jobs %v", r.code, got)
	}
}

// TestReliabStdoutFullFailsJobs (item 2): output that cannot be written
// fails its job, stops the run with an error, and --resume runs the job.
func TestReliabStdoutFullFailsJobs(t *testing.T) {
	t.Parallel()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	r := rcmd{dir: dir, stdout: full, args: []string{"run", "-j", "1", "--joblog", jl, "--", "echo", ":::", "a", "b", "c"}}.run(t)
	if r.code == 0 || !strings.Contains(r.stderr, "no space left on device") {
		t.Fatalf("exit %d, want an error naming ENOSPC:\n%s", r.code, r.stderr)
	}
	for seq, e := range readJoblog(t, jl) {
		if e.Succeeded() {
			t.Errorf("job %d recorded as succeeded though its output was lost", seq)
		}
	}
	r = rcmd{dir: dir, args: []string{"run", "-j", "1", "--joblog", jl, "--resume-failed", "--", "echo", ":::", "a", "b", "c"}}.run(t)
	if r.code != 0 || r.stdout != "a\nb\nc\n" {
		t.Errorf("--resume-failed: exit %d, stdout %q, want all three", r.code, r.stdout)
	}
}

// TestReliabSpillFullFailsJob (item 3): a spill file that hits a full disk
// keeps a bounded window in memory, then fails the job with the reason;
// --resume-failed runs it again.
func TestReliabSpillFullFailsJob(t *testing.T) {
	t.Parallel()
	tmp := tmpfs(t, "256k")
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	args := []string{"run", "--joblog", jl, "--", "sh", "-c", "head -c 12000000 /dev/zero", ":::", "x"}
	r := rcmd{dir: dir, env: []string{"TMPDIR=" + tmp}, stdout: devNullW(t), args: args}.run(t)
	if r.code != 1 || !strings.Contains(r.stderr, "output lost") || !strings.Contains(r.stderr, "no space left") {
		t.Fatalf("exit %d, want 1 with the reason:\n%s", r.code, r.stderr)
	}
	if e := readJoblog(t, jl)[1]; e.Succeeded() {
		t.Errorf("joblog: %+v, want failed", e)
	}
	r = rcmd{dir: dir, stdout: devNullW(t), args: append([]string{"run", "--resume-failed"}, args[1:]...)}.run(t)
	if r.code != 0 || !readJoblog(t, jl)[1].Succeeded() {
		t.Errorf("--resume-failed: exit %d:\n%s", r.code, r.stderr)
	}
}

// TestReliabJoblogFullDisk (item 4): a joblog on a disk that fills: every
// line left is whole, the run ends with an error naming the job, and
// --resume runs exactly the jobs not recorded.
func TestReliabJoblogFullDisk(t *testing.T) {
	t.Parallel()
	disk := tmpfs(t, "16k")
	dir := t.TempDir()
	jl, out := filepath.Join(disk, "jl"), filepath.Join(dir, "out")
	var ins []string
	for i := range 60 {
		ins = append(ins, fmt.Sprintf("%03d-%s", i, strings.Repeat("x", 600)))
	}
	args := append([]string{"run", "-j", "2", "--joblog", jl, "--"}, appendJob(out)...)
	r := rcmd{dir: dir, args: append(args, append([]string{":::"}, ins...)...)}.run(t)
	if r.code == 0 || !strings.Contains(r.stderr, "not recorded") {
		t.Fatalf("exit %d, want an error naming the job not recorded:\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(jl)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Errorf("joblog ends in a partial line: %q", b[max(len(b)-40, 0):])
	}
	recorded := readJoblog(t, jl)
	if len(recorded) == 0 || len(recorded) >= 60 {
		t.Fatalf("%d records on a 16k disk", len(recorded))
	}
	// Resume from a copy on a roomy disk.
	jl2 := filepath.Join(dir, "jl")
	if err := os.WriteFile(jl2, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before := lineCounts(t, out)
	args = append([]string{"run", "-j", "2", "--joblog", jl2, "--resume", "--"}, appendJob(out)...)
	if r = (rcmd{dir: dir, args: append(args, append([]string{":::"}, ins...)...)}.run(t)); r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	after := lineCounts(t, out)
	for i, in := range ins {
		ran := after[in] - before[in]
		if _, ok := recorded[int64(i+1)]; ok && ran != 0 {
			t.Errorf("job %d was recorded, yet --resume ran it again", i+1)
		} else if !ok && ran != 1 {
			t.Errorf("job %d was not recorded; --resume ran it %d times", i+1, ran)
		}
	}
}

// TestReliabSecondRunSameJoblog (item 5): a second run on a joblog in use
// stops at once, naming the other process, and the first run's log stays
// whole.
func TestReliabSecondRunSameJoblog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	first := rcmd{dir: dir, args: []string{"run", "-j", "2", "--joblog", jl, "--", "sleep", ":::", "0.5", "0.5", "0.5", "0.5"}}
	cmd, out, errb := first.start(t)
	testutil.Eventually(t, 5*time.Second, "the first run's joblog header", func() bool {
		b, _ := os.ReadFile(jl)
		return strings.HasPrefix(string(b), "Seq\t")
	})
	r := rcmd{dir: dir, args: []string{"run", "--joblog", jl, "--", "true", ":::", "a"}}.run(t)
	if r.code != exitUsage || !strings.Contains(r.stderr, fmt.Sprint(cmd.Process.Pid)) {
		t.Errorf("second run: exit %d, want 255 naming pid %d:\n%s", r.code, cmd.Process.Pid, r.stderr)
	}
	if r1 := waitRation(t, cmd, out, errb, 30*time.Second); r1.code != 0 {
		t.Fatalf("first run: exit %d: %s", r1.code, r1.stderr)
	}
	if recs := readJoblog(t, jl); len(recs) != 4 {
		t.Errorf("first run's joblog has %d records, want 4", len(recs))
	}
}

// TestReliabJoblogIsInput (item 6): --joblog f -a f is refused before f is
// touched.
func TestReliabJoblogIsInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	r := rcmd{dir: dir, args: []string{"run", "--joblog", "link", "-a", "./f", "--", "echo"}}.run(t)
	if r.code != exitUsage || !strings.Contains(r.stderr, "same file as input") || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, want 255 and an error:\n%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(f); string(b) != "a\nb\n" {
		t.Errorf("the input was changed: %q", b)
	}
}

// TestReliabJobsDieWithRation (item 7): SIGKILL of ration kills its
// running jobs (PR_SET_PDEATHSIG), within a second.
func TestReliabJobsDieWithRation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mark := fmt.Sprintf("31.%d%06d", os.Getpid()%1000, time.Now().Nanosecond()/1000) // a sleep nobody else runs
	cmd, out, errb := rcmd{dir: dir, args: []string{"run", "-j", "3", "--", "sh", "-c", `echo $$ > "$1"; exec sleep 30 ` + mark, "sh",
		":::", "p1", "p2", "p3"}}.start(t)
	for _, p := range []string{"p1", "p2", "p3"} {
		testutil.ReadPID(t, filepath.Join(dir, p), 10*time.Second)
	}
	// The sleeps' command lines hold "\x00"+mark; ration's, with the
	// script, has a space before it.
	mark0 := "\x00" + mark
	testutil.Eventually(t, 5*time.Second, "three sleeping jobs", func() bool { return len(procsWith(mark0)) == 3 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitRation(t, cmd, out, errb, 10*time.Second)
	if left := waitNoProcs(mark0, time.Second); len(left) > 0 {
		t.Errorf("jobs %v outlived ration by a second", left)
		for _, p := range left {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// TestReliabHangupDrains (item 8): SIGHUP drains like SIGTERM: a message,
// the finished jobs logged, exit 129.
func TestReliabHangupDrains(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	cmd, out, errb := rcmd{dir: dir, args: []string{"run", "-j", "1", "--joblog", jl, "--", "sleep", ":::", "0.3", "5", "5"}}.start(t)
	testutil.Eventually(t, 10*time.Second, "job 1 logged", func() bool { return countRecords(jl) == 1 })
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	r := waitRation(t, cmd, out, errb, 20*time.Second)
	if r.code != 128+int(syscall.SIGHUP) || !strings.Contains(r.stderr, "got SIGHUP") {
		t.Errorf("exit %d, want 129 with a message:\n%s", r.code, r.stderr)
	}
	if recs := readJoblog(t, jl); len(recs) != 2 {
		t.Errorf("joblog has %d records, want 2 (job 2 finished within --term-timeout)", len(recs))
	}
}

// TestReliabBrokenPipe (item 8): `ration run ... | head -1`: ration stops
// starting jobs, logs what finished and exits 141 with a message.
func TestReliabBrokenPipe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	r := rcmd{dir: dir, args: append([]string{"run", "-j", "1", "--joblog", jl, "--", "sh", "-c", `sleep 0.02; echo "$1"`, "sh", ":::"}, inputs(200)...)}.
		runIntoGoneReader(t, 1, 20*time.Second)
	if r.code != 141 || !strings.Contains(r.stderr, "broken pipe") {
		t.Errorf("exit %d, want 141 with a message:\n%s", r.code, r.stderr)
	}
	recs := readJoblog(t, jl)
	if len(recs) == 0 || len(recs) == 200 {
		t.Errorf("%d jobs logged, want some, not all", len(recs))
	}
}

// TestReliabBrokenPipeKeepOrder: `ration run -k ... | head -1`: the job
// whose output met the closed pipe failed; the jobs that ended before it
// and waited for their turn were not printed because the run stopped, and
// are stopped as the running ones are (not recorded: --resume runs them).
// They were counted as failed: "0 done, 5 failed".
func TestReliabBrokenPipeKeepOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	// Job 1 ends last; the others' output (more than a pipe holds)
	// waits behind it.
	r := rcmd{dir: dir, args: []string{"run", "-k", "-j", "5", "--joblog", jl, "--shell",
		`[ {} = 1 ] && sleep 0.5; seq 1 100000`, ":::", "1", "2", "3", "4", "5"}}.runIntoGoneReader(t, 2, 20*time.Second)
	if r.code != 141 || !strings.Contains(r.stderr, "0 done, 1 failed, 4 stopped") {
		t.Errorf("exit %d, want 141 and 0 done, 1 failed, 4 stopped:\n%s", r.code, r.stderr)
	}
	if recs := readJoblog(t, jl); len(recs) != 0 {
		t.Errorf("%d jobs logged, want none: no job's output was delivered", len(recs))
	}
}
