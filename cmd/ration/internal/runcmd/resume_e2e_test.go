//go:build linux

package runcmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fileSet writes n files data/{a,b}/fNNN.txt under dir and returns their
// paths relative to dir.
func fileSet(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkJoblogOnce fails t when two records of the joblog at path share a
// number or a command.
func checkJoblogOnce(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seqs, cmds := map[string]bool{}, map[string]bool{}
	var all []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(l, "\t")
		if len(f) != 9 {
			t.Fatalf("joblog line %q", l)
		}
		if seqs[f[0]] || cmds[f[8]] {
			t.Errorf("joblog: job %s (%s) recorded twice:\n%s", f[0], f[8], b)
		}
		seqs[f[0]], cmds[f[8]] = true, true
		all = append(all, f[8])
	}
	return all
}

// TestResumeGzipFiles: 200 files gzipped over --files, interrupted by
// SIGINT at several points and resumed each time with the command the
// hint gives: every file is compressed exactly once. gzip removes each
// file it compressed, so the resumed walk numbers the rest from 1; when
// the joblog's records were matched by number, the resume skipped as many
// of them as had ended ("0 done, 96 skipped", exit 0) and left them.
func TestResumeGzipFiles(t *testing.T) {
	if _, err := exec.LookPath("gzip"); err != nil {
		t.Skip("gzip is not installed")
	}
	dir := t.TempDir()
	var names []string
	for i := range 200 {
		names = append(names, fmt.Sprintf("data/%c/f%03d.txt", 'a'+i%3, i))
	}
	fileSet(t, dir, names...)
	args := []string{"run", "-j4", "--joblog", "gz.log", "--files", "data/**/*.txt", "--shell", `sleep 0.1 && echo {} >> ran.log && gzip {}`}
	jl := filepath.Join(dir, "gz.log")
	for i, at := range []int{25, 90, 160} {
		run := args
		if i > 0 {
			run = append([]string{"run", "--resume"}, args[1:]...)
		}
		cmd, out, errb := rcmd{dir: dir, args: run}.start(t)
		deadline := time.Now().Add(30 * time.Second)
		for countRecords(jl) < at && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		r := waitRation(t, cmd, out, errb, 60*time.Second)
		if r.code != 130 {
			t.Fatalf("interrupt at %d records: exit %d, want 130; stderr:\n%s", at, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "to run the rest: ration run --resume -j4 --joblog gz.log") {
			t.Errorf("no resume hint:\n%s", r.stderr)
		}
	}
	r := rcmd{dir: dir, args: append([]string{"run", "--resume"}, args[1:]...)}.run(t)
	if r.code != 0 {
		t.Fatalf("last resume: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n+".gz")); err != nil {
			t.Errorf("%s was not compressed: %v", n, err)
		}
	}
	ran := lineCounts(t, filepath.Join(dir, "ran.log"))
	for _, n := range names {
		if ran[n] != 1 {
			t.Errorf("%s compressed %d times, want once", n, ran[n])
		}
	}
	if recs := checkJoblogOnce(t, jl); len(recs) != 200 {
		t.Errorf("joblog holds %d records, want 200", len(recs))
	}
}

// TestResumeFilesAddedRemoved: files added and removed between a run and
// its resume: the files that ended are skipped, every other one (the new
// ones included) runs once, under a number no record holds.
func TestResumeFilesAddedRemoved(t *testing.T) {
	dir := t.TempDir()
	fileSet(t, dir, "d/b.txt", "d/d.txt", "d/f.txt", "d/h.txt")
	args := []string{"run", "-j1", "--joblog", "j.log", "--files", "d/*.txt", "--shell", `echo {} >> ran.log`}
	if r := (rcmd{dir: dir, args: args}).run(t); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if err := os.Remove(filepath.Join(dir, "d/d.txt")); err != nil {
		t.Fatal(err)
	}
	fileSet(t, dir, "d/a.txt", "d/c.txt", "d/z.txt")
	r := rcmd{dir: dir, args: append([]string{"run", "--resume"}, args[1:]...)}.run(t)
	if r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "3 done, 0 failed, 3 skipped") {
		t.Errorf("resume summary:\n%s", r.stderr)
	}
	ran := lineCounts(t, filepath.Join(dir, "ran.log"))
	want := map[string]int{"d/a.txt": 1, "d/b.txt": 1, "d/c.txt": 1, "d/d.txt": 1, "d/f.txt": 1, "d/h.txt": 1, "d/z.txt": 1}
	if fmt.Sprint(ran) != fmt.Sprint(want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
	checkJoblogOnce(t, filepath.Join(dir, "j.log"))
}

// TestResumeOtherCommand: a joblog written by another command is refused
// with one line that names both, before any job runs and without a byte
// of the joblog changed; --resume-any-command runs every input.
func TestResumeOtherCommand(t *testing.T) {
	dir := t.TempDir()
	if r := (rcmd{dir: dir, args: []string{"run", "-q", "--joblog", "t.log", "echo", "first", ":::", "a", "b", "c"}}).run(t); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "t.log"))
	second := []string{"run", "--resume", "--joblog", "t.log", "echo", "second", ":::", "x", "y", "z"}
	r := rcmd{dir: dir, args: second}.run(t)
	if r.code != exitUsage || r.stdout != "" {
		t.Errorf("exit %d, stdout %q; want %d and nothing run", r.code, r.stdout, exitUsage)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"echo first `) || !strings.Contains(lines[0], `"echo second"`) ||
		!strings.Contains(lines[0], "--resume-any-command") {
		t.Errorf("want one line naming both commands and --resume-any-command, got:\n%s", r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "t.log")); string(after) != string(before) {
		t.Errorf("the refused joblog changed:\n%s\nto\n%s", before, after)
	}
	r = rcmd{dir: dir, args: append([]string{"run", "--resume-any-command"}, second[1:]...)}.run(t)
	got := strings.Fields(r.stdout)
	slices.Sort(got)
	if r.code != 0 || strings.Join(got, " ") != "second second second x y z" {
		t.Errorf("--resume-any-command: exit %d, stdout %q", r.code, r.stdout)
	}
}

// TestResumeGNUJoblog: GNU parallel's joblog resumed by ration skips the
// inputs GNU ran, also when the input changed order and grew (by number,
// ration skipped c, d and a); and ration's joblog, interrupted, is
// resumed by GNU parallel with the same input, which runs the rest.
func TestResumeGNUJoblog(t *testing.T) {
	if _, err := exec.LookPath("parallel"); err != nil {
		t.Skip("GNU parallel is not installed (apt-get install parallel)")
	}
	dir := t.TempDir()
	gnu := func(args ...string) {
		t.Helper()
		c := exec.Command("parallel", append([]string{"--will-cite"}, args...)...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("parallel %q: %v\n%s", args, err, out)
		}
	}
	out := filepath.Join(dir, "ran")
	gnu("--joblog", "g.log", "echo {} >> "+out, ":::", "a", "b", "c")
	r := rcmd{dir: dir, args: []string{"run", "--resume", "--joblog", "g.log", "--shell", "echo {} >> " + out, ":::", "c", "d", "a", "e"}}.run(t)
	if r.code != 0 {
		t.Fatalf("ration --resume of GNU's joblog: exit %d: %s", r.code, r.stderr)
	}
	if got := lineCounts(t, out); fmt.Sprint(got) != "map[a:1 b:1 c:1 d:1 e:1]" {
		t.Errorf("after GNU and ration's resume: ran %v", got)
	}
	checkJoblogOnce(t, filepath.Join(dir, "g.log"))

	// ration's joblog of an interrupted run, resumed by GNU parallel.
	out2 := filepath.Join(dir, "ran2")
	in := inputs(12)
	cmd, o, e := rcmd{dir: dir, args: append([]string{"run", "-j2", "--joblog", "r.log", "--shell", "sleep 0.2; echo {} >> " + out2, ":::"}, in...)}.start(t)
	for countRecords(filepath.Join(dir, "r.log")) < 4 {
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	if r := waitRation(t, cmd, o, e, 30*time.Second); r.code != 130 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	gnu(append([]string{"--resume", "-j2", "--joblog", "r.log", "sleep 0.2; echo {} >> " + out2, ":::"}, in...)...)
	got := lineCounts(t, out2)
	for _, v := range in {
		if got[v] != 1 {
			t.Errorf("%s ran %d times after GNU parallel's resume of ration's joblog", v, got[v])
		}
	}
}
