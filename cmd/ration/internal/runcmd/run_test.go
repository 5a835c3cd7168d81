//go:build unix

package runcmd

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/joblog"
)

// hostile are input names no shell-unaware tool survives.
var hostile = []string{
	"plain.txt",
	"with space.tar.gz",
	"it's a \"quote\".c",
	"new\nline.md",
	"-n",
	"--help",
	"dir.x/no_ext",
	"dir/.hidden",
	"\xff\xfe-not-utf8.bin",
	"tab\there/$(touch pwned)`x`;*.sh",
}

type e2e struct {
	t   *testing.T
	bin string
}

type result struct {
	code           int
	stdout, stderr string
}

func (e e2e) cmd(stdin string, args ...string) *exec.Cmd {
	c := exec.Command(e.bin, append([]string{"run"}, args...)...)
	c.Stdin = strings.NewReader(stdin)
	c.Env = append(os.Environ(), "RATION_JOBS=", "RATION_SHARD_COUNT=", "JOB_COMPLETION_INDEX=")
	return c
}

func (e e2e) run(stdin string, args ...string) result {
	e.t.Helper()
	c := e.cmd(stdin, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		e.t.Fatal(err)
	}
	return result{c.ProcessState.ExitCode(), out.String(), errb.String()}
}

// TestRunE2E runs the built binary for real. The binary is built once for
// the test binary; the subtests run in parallel, and none may leave a
// child process behind.
func TestRunE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	e := e2e{t: t, bin: buildRation(t)}
	t.Cleanup(func() { noChildrenLeft(t) }) // after the parallel subtests
	for _, c := range []struct {
		name string
		f    func(e2e, *testing.T)
	}{
		{"Templates", e2e.templates},
		{"ShellTemplates", e2e.shellTemplates},
		{"FilesHostileNames", e2e.filesHostile},
		{"KeepOrder", e2e.keepOrder},
		{"TimeoutKillsChild", e2e.timeoutKillsChild},
		{"HaltNow", e2e.haltNow},
		{"Retries", e2e.retries},
		{"JoblogLikeGNU", e2e.joblogLikeGNU},
		{"ResumeAfterSIGTERM", e2e.resumeAfterSIGTERM},
		{"SIGTERMLeavesNoChild", e2e.sigtermNoChild},
		{"SecondSignalKills", e2e.secondSignal},
		{"SIGUSR1", e2e.sigusr1},
		{"ExitCodes", e2e.exitCodes},
		{"UsageErrors", e2e.usageErrors},
		{"Shards", e2e.shards},
		{"ShardFromEnv", e2e.shardFromEnv},
		{"ArgFileDryRunBar", e2e.argFileDryRunBar},
		{"FailureLines", e2e.failureLines},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.f(e, t)
		})
	}
}

// noChildrenLeft fails if a process started by this test process is still
// alive (zombies included: nobody would reap them), naming each with its
// state and command line, which tell the test that left it.
func noChildrenLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		for _, c := range procChildren(os.Getpid()) {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c.pid))
			left = append(left, fmt.Sprintf("%s %s %q", c.comm, c.state, strings.ReplaceAll(string(cmdline), "\x00", " ")))
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("child processes left: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// procChild is a process found in /proc whose parent is the one asked for.
type procChild struct {
	pid   int
	comm  string // "pid (name)" as /proc/PID/stat starts
	state string // "R", "S", "Z", ...
}

// procChildren lists the processes whose parent is ppid, zombies included.
func procChildren(ppid int) []procChild {
	var kids []procChild
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		end := strings.LastIndexByte(s, ')') + 1
		f := strings.Fields(s[end:])
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			kids = append(kids, procChild{pid: pid, comm: s[:end], state: f[0]})
		}
	}
	return kids
}

// allStrings are every replacement string, one argument each.
var allStrings = []string{"{}", "{.}", "{/}", "{//}", "{/.}", "{#}", "{%}"}

// expected computes what GNU parallel prints for allStrings with -j1, by
// asking it when it is installed, else from the rules checked against it
// in internal/template.
func (e e2e) gnu(inputs []string, args ...string) (string, bool) {
	if _, err := exec.LookPath("parallel"); err != nil {
		return "", false
	}
	c := exec.Command("parallel", append([]string{"--will-cite", "-0", "-j1", "-k"}, args...)...)
	c.Stdin = strings.NewReader(strings.Join(inputs, "\x00") + "\x00")
	out, err := c.Output()
	if err != nil {
		e.t.Fatalf("parallel: %v", err)
	}
	return string(out), true
}

func (e e2e) templates(t *testing.T) {
	e.t = t
	in := strings.Join(hostile, "\x00") + "\x00"
	r := e.run(in, append([]string{"-0", "-j1", "-k", "printf", `%s\0`}, allStrings...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := strings.Split(strings.TrimSuffix(r.stdout, "\x00"), "\x00")
	if len(got) != 7*len(hostile) {
		t.Fatalf("%d outputs for %d inputs: %q", len(got), len(hostile), got)
	}
	for i, h := range hostile {
		g := got[7*i : 7*i+7]
		if g[0] != h || g[5] != strconv.Itoa(i+1) || g[6] != "1" {
			t.Errorf("input %q: got %q", h, g)
		}
	}
	if want, ok := e.gnu(hostile, append([]string{"printf", `'%s\0'`}, allStrings...)...); ok && want != r.stdout {
		t.Errorf("differs from GNU parallel:\n got %q\nwant %q", r.stdout, want)
	}
	// Without a replacement string the input is the last argument; a
	// leading dash stays an argument, not an option.
	r = e.run("", "-k", "printf", `[%s]`, ":::", "-n", "--help", "a b")
	if r.stdout != "[-n][--help][a b]" {
		t.Errorf("appended input: %q", r.stdout)
	}
}

func (e e2e) shellTemplates(t *testing.T) {
	e.t = t
	in := strings.Join(hostile, "\x00") + "\x00"
	dir := t.TempDir()
	script := `printf '%s\0' ` + strings.Join(allStrings, " ") + ` | cat`
	c := e.cmd(in, "-0", "-j1", "-k", "--shell", script)
	c.Dir = dir
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want, ok := e.gnu(hostile, script); ok && want != string(out) {
		t.Errorf("differs from GNU parallel:\n got %q\nwant %q", out, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a substituted input was run by the shell")
	}
	if n := strings.Count(string(out), "\x00"); n != 7*len(hostile) {
		t.Errorf("%d outputs", n)
	}
}

func (e e2e) filesHostile(t *testing.T) {
	e.t = t
	dir := t.TempDir()
	var want []string
	for _, h := range hostile {
		name := strings.ReplaceAll(h, "/", "_")
		if err := os.WriteFile(filepath.Join(dir, name), []byte(h), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, h)
	}
	os.WriteFile(filepath.Join(dir, "skip.tmp"), nil, 0o644)
	c := e.cmd("", "-k", "--files", dir+"/**", "--exclude", "*.tmp", "cat", "{}")
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	// cat of every file in lexical order of the names.
	slices.SortFunc(want, func(a, b string) int {
		return strings.Compare(strings.ReplaceAll(a, "/", "_"), strings.ReplaceAll(b, "/", "_"))
	})
	if string(out) != strings.Join(want, "") {
		t.Errorf("got %q\nwant %q", out, strings.Join(want, ""))
	}
}

func (e e2e) keepOrder(t *testing.T) {
	e.t = t
	var in strings.Builder
	for i := range 40 {
		fmt.Fprintf(&in, "%d\n", i)
	}
	// Each job sleeps a pseudo-random time and prints two lines.
	r := e.run(in.String(), "-k", "-j", "6", "--shell", `sleep 0.$(( ({} * 7919) % 10 ))$(( ({} * 31) % 10 )); echo a{}; echo b{}`)
	var want strings.Builder
	for i := range 40 {
		fmt.Fprintf(&want, "a%d\nb%d\n", i, i)
	}
	if r.code != 0 || r.stdout != want.String() {
		t.Errorf("exit %d, out of order:\n%s", r.code, r.stdout)
	}
}

// readPid returns the pid a job wrote to file, once it is there.
func readPid(t *testing.T, file string) int {
	t.Helper()
	return testutil.ReadPID(t, file, 10*time.Second)
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

func assertGone(t *testing.T, pids ...int) {
	t.Helper()
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL) // whatever the outcome
		}
	})
	for _, pid := range pids {
		testutil.Eventually(t, 5*time.Second, fmt.Sprintf("process %d, which outlived its job, to end", pid), func() bool { return !alive(pid) })
	}
}

func (e e2e) timeoutKillsChild(t *testing.T) {
	e.t = t
	dir := t.TempDir()
	// The job starts a child that ignores SIGTERM and records its pid.
	script := `sh -c 'trap "" TERM; echo $$ > ` + dir + `/{}.pid; exec sleep 60' & wait`
	start := time.Now()
	r := e.run("", "--timeout", "0.5", "--shell", script, ":::", "a", "b")
	if r.code != 2 {
		t.Errorf("exit %d, want 2 (two timed-out jobs): %s", r.code, r.stderr)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("took %s", el)
	}
	assertGone(t, readPid(t, dir+"/a.pid"), readPid(t, dir+"/b.pid"))
}

func (e e2e) haltNow(t *testing.T) {
	e.t = t
	dir := t.TempDir()
	var in strings.Builder
	for i := range 50 {
		fmt.Fprintf(&in, "%d\n", i)
	}
	r := e.run(in.String(), "-j", "2", "--halt", "now,fail=1", "--shell", `touch `+dir+`/{}; [ {} = 3 ] && exit 7; sleep 0.2`)
	if r.code < 1 || r.code > 100 {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) > 8 {
		t.Errorf("%d jobs started; --halt now,fail=1 should stop right after job 3", len(ents))
	}
}

func (e e2e) retries(t *testing.T) {
	e.t = t
	dir := t.TempDir()
	cnt := dir + "/n"
	r := e.run("", "--retries", "3", "--shell", `echo {} >> `+cnt+`; [ $(wc -l < `+cnt+`) -ge 3 ]`, ":::", "1")
	b, _ := os.ReadFile(cnt)
	if r.code != 0 || strings.Count(string(b), "1") != 3 {
		t.Errorf("exit %d after %d attempts", r.code, strings.Count(string(b), "1"))
	}
	os.Remove(cnt)
	r = e.run("", "--retries", "2", "--shell", `echo {} >> `+cnt+`; exit 1`, ":::", "1")
	b, _ = os.ReadFile(cnt)
	if r.code != 1 || strings.Count(string(b), "1") != 2 {
		t.Errorf("exit %d after %d attempts", r.code, strings.Count(string(b), "1"))
	}
}

func (e e2e) joblogLikeGNU(t *testing.T) {
	e.t = t
	dir := t.TempDir()
	args := []string{"a b", "q'x", "3"}
	ours := dir + "/ours.log"
	r := e.run("", "-k", "--joblog", ours, "echo", ":::", args[0], args[1], args[2])
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	oursB, _ := os.ReadFile(ours)
	f, _ := os.Open(ours)
	defer f.Close()
	n := 0
	for ent, err := range joblog.Entries(f) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if ent.Exitval != 0 || ent.Host != ":" || ent.Receive == 0 {
			t.Errorf("entry %+v", ent)
		}
	}
	if n != 3 {
		t.Errorf("%d entries", n)
	}
	if _, err := exec.LookPath("parallel"); err != nil {
		t.Skip("GNU parallel not installed: cannot compare the shape with its joblog")
	}
	theirs := dir + "/gnu.log"
	c := exec.Command("parallel", "--will-cite", "-k", "--joblog", theirs, "echo", ":::", args[0], args[1], args[2])
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("parallel: %v %s", err, out)
	}
	theirsB, _ := os.ReadFile(theirs)
	ol := strings.Split(strings.TrimSuffix(string(oursB), "\n"), "\n")
	tl := strings.Split(strings.TrimSuffix(string(theirsB), "\n"), "\n")
	if len(ol) != len(tl) || ol[0] != tl[0] {
		t.Fatalf("ours:\n%s\ngnu:\n%s", oursB, theirsB)
	}
	// Lines come in completion order: compare them by Seq.
	bySeq := func(a, b string) int {
		x, _ := strconv.Atoi(strings.SplitN(a, "\t", 2)[0])
		y, _ := strconv.Atoi(strings.SplitN(b, "\t", 2)[0])
		return x - y
	}
	slices.SortFunc(ol[1:], bySeq)
	slices.SortFunc(tl[1:], bySeq)
	// Column by column: timing columns by shape, the rest equal.
	shape := []*regexp.Regexp{nil, nil, regexp.MustCompile(`^\d{10}\.\d{3}$`), regexp.MustCompile(`^ *\d+\.\d{3}$`)}
	for i := 1; i < len(ol); i++ {
		oc, tc := strings.Split(ol[i], "\t"), strings.Split(tl[i], "\t")
		if len(oc) != 9 || len(tc) != 9 {
			t.Fatalf("line %d: %d and %d columns", i, len(oc), len(tc))
		}
		for c := range 9 {
			if c == 2 || c == 3 {
				if !shape[c].MatchString(oc[c]) || len(oc[c]) != len(tc[c]) {
					t.Errorf("line %d column %d: ours %q, gnu %q", i, c, oc[c], tc[c])
				}
				continue
			}
			if oc[c] != tc[c] {
				t.Errorf("line %d column %d: ours %q, gnu %q", i, c, oc[c], tc[c])
			}
		}
	}
}

func seqInput(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func (e e2e) resumeAfterSIGTERM(t *testing.T) {
	e.t = t
	dir := t.TempDir()
	log, done := dir+"/log", dir+"/done"
	job := `sleep 0.3; echo {} >> ` + done
	in := seqInput(30)
	c := e.cmd(in, "-j", "3", "--joblog", log, "--shell", job)
	var errb bytes.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once some jobs are done, well before all 30 can be.
	testutil.Eventually(t, 30*time.Second, "the first jobs to end", func() bool {
		b, _ := os.ReadFile(done)
		return bytes.Count(b, []byte("\n")) >= 3
	})
	c.Process.Signal(syscall.SIGTERM)
	c.Wait()
	if code := c.ProcessState.ExitCode(); code != 143 {
		t.Fatalf("exit %d after SIGTERM, want 143: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "--resume") {
		t.Errorf("no resume hint: %s", errb.String())
	}
	first := readLines(t, done)
	if len(first) == 0 || len(first) >= 30 {
		t.Fatalf("first run did %d jobs", len(first))
	}
	rec, err := joblog.Load(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range first {
		n, _ := strconv.Atoi(s)
		if !rec.Succeeded(int64(n)) {
			t.Errorf("job %d ran but is not in the joblog", n)
		}
	}
	r := e.run(in, "-j", "3", "--joblog", log, "--resume", "--shell", job)
	if r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	all := readLines(t, done)
	second := all[len(first):]
	for _, s := range second {
		n, _ := strconv.Atoi(s)
		if rec.Ended(int64(n)) {
			t.Errorf("resume ran job %d again", n)
		}
	}
	slices.SortFunc(all, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
	if strings.Join(all, "\n")+"\n" != in {
		t.Errorf("union of the runs: %q", all)
	}
}

func readLines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func (e e2e) sigtermNoChild(t *testing.T) {
	e.t = t
	dir := t.TempDir()
	// Jobs that ignore SIGTERM in a child and never end on their own.
	c := e.cmd(seqInput(10), "-j", "3", "--term-timeout", "0.3", "--shell",
		`sh -c 'trap "" TERM; echo $$ > `+dir+`/{}.pid; exec sleep 60' & sleep 60`)
	var errb bytes.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for i := 1; i <= 3; i++ {
		pids = append(pids, readPid(t, fmt.Sprintf("%s/%d.pid", dir, i)))
	}
	c.Process.Signal(syscall.SIGTERM)
	c.Wait()
	if code := c.ProcessState.ExitCode(); code != 143 {
		t.Errorf("exit %d, want 143: %s", code, errb.String())
	}
	assertGone(t, pids...)
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("%d jobs started, want 3 (none after SIGTERM)", len(ents))
	}
}

func (e e2e) secondSignal(t *testing.T) {
	e.t = t
	dir := t.TempDir()
	c := e.cmd("", "-j", "2", "--shell", `echo $$ > `+dir+`/{}.pid; exec sleep 60`, ":::", "a", "b")
	var errb testutil.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pids := []int{readPid(t, dir+"/a.pid"), readPid(t, dir+"/b.pid")}
	start := time.Now()
	c.Process.Signal(syscall.SIGINT)
	// The second signal counts as such once the first was handled.
	testutil.WaitForText(t, 10*time.Second, errb.String, "got SIGINT: starting no more jobs")
	c.Process.Signal(syscall.SIGINT)
	c.Wait()
	if code := c.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130", code)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("second signal took %s to kill (term-timeout is 20s)", el)
	}
	assertGone(t, pids...)
}

// sigusr1: the report lists both running jobs. A job's process runs before
// ration records its start (and the report lists it), so the test waits
// for what ration prints only after that: each job's line, passed through
// by --line-buffer. The jobs run until the report is out.
func (e e2e) sigusr1(t *testing.T) {
	e.t = t
	release := filepath.Join(t.TempDir(), "release")
	c := e.cmd("", "-j", "2", "--line-buffer", "--shell",
		`echo working on {}; while [ ! -e `+release+` ]; do sleep 0.05; done`, ":::", "alpha", "beta")
	var out, errb testutil.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.WriteFile(release, nil, 0o644) // the jobs end, with or without ration
		if c.ProcessState == nil {
			c.Process.Kill()
			c.Wait()
		}
	})
	testutil.WaitForText(t, 10*time.Second, out.String, "working on alpha\n")
	testutil.WaitForText(t, 10*time.Second, out.String, "working on beta\n")
	c.Process.Signal(syscall.SIGUSR1)
	testutil.WaitForText(t, 10*time.Second, errb.String, "SLOT")
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	if code := c.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit %d", code)
	}
	s := errb.String()
	// The table is watchdog.WriteTable's, as in the stall report: inputs
	// unquoted in their own column.
	if !strings.Contains(s, "SLOT") || !regexp.MustCompile(`(?m)^1\s+\d+\s+\d+\s+\S+\s+(alpha|beta)\s`).MatchString(s) ||
		!strings.Contains(s, " alpha ") || !strings.Contains(s, " beta ") {
		t.Errorf("no running-jobs table: %s", s)
	}
	// Its counters name the jobs the run stopped as the summary, the logs
	// and the metrics do: "stopped".
	if !regexp.MustCompile(`(?m)^ration: 2 running, 0 done, 0 failed, 0 stopped; pool size`).MatchString(s) {
		t.Errorf("no counters line saying 'stopped': %s", s)
	}
}

func (e e2e) exitCodes(t *testing.T) {
	e.t = t
	for _, c := range []struct{ fail, want int }{{0, 0}, {3, 3}, {150, 101}} {
		r := e.run(seqInput(160), "-j", "4", "--shell", fmt.Sprintf("[ {} -gt %d ]", c.fail))
		if r.code != c.want {
			t.Errorf("%d failed jobs: exit %d, want %d", c.fail, r.code, c.want)
		}
	}
}

func (e e2e) usageErrors(t *testing.T) {
	e.t = t
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "abc", "true"}, `ration run: --timeout: "abc" is not a duration`},
		{[]string{"--term-timeout", "-1", "true"}, `--term-timeout: "-1" is not a duration`},
		{[]string{"--shard", "3/3", "true"}, "--shard"},
		{[]string{"--halt", "later", "true"}, "--halt"},
		{[]string{"-j", "zero", "true"}, `ration run: --jobs: "zero" is not a whole number >= 1`},
		{[]string{"--bogus", "true"}, "unknown flag: --bogus"},
		{[]string{"-a", "/does/not/exist", "true"}, "-a /does/not/exist: no such file or directory"},
		{[]string{"--files", "/does/not/exist/**", "true"}, "/does/not/exist"},
		{[]string{"--resume", "true"}, "need --joblog"},
		// Errors found when the run starts are one line too, no summary.
		{[]string{"--joblog", "/does/not/exist/x.log", "true", ":::", "a"}, "/does/not/exist/x.log: no such file or directory"},
		{[]string{"--files", "no-such-file-*", "true"}, "no-such-file-*: no file matches"},
		{[]string{"-k", "-u", "true"}, "cannot be combined"},
		{[]string{"true", ":::", "a"}, ""}, // not an error: control
	} {
		r := e.run("", c.args...)
		if c.want == "" {
			if r.code != 0 {
				t.Errorf("%q: exit %d", c.args, r.code)
			}
			continue
		}
		if r.code != 255 || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 255 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

func (e e2e) shards(t *testing.T) {
	e.t = t
	in := seqInput(10000)
	for _, n := range []int{1, 3, 8} {
		seen := make([]int, 10001)
		for i := range n {
			r := e.run(in, "--dry-run", "--shard", fmt.Sprintf("%d/%d", i, n), "echo")
			if r.code != 0 {
				t.Fatalf("shard %d/%d: exit %d %s", i, n, r.code, r.stderr)
			}
			for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
				v, err := strconv.Atoi(strings.TrimPrefix(l, "echo "))
				if err != nil {
					t.Fatalf("line %q", l)
				}
				seen[v]++
			}
		}
		for v := 1; v <= 10000; v++ {
			if seen[v] != 1 {
				t.Fatalf("N=%d: input %d in %d shards", n, v, seen[v])
			}
		}
	}
}

func (e e2e) shardFromEnv(t *testing.T) {
	e.t = t
	in := seqInput(100)
	got := 0
	for i := range 3 {
		c := e.cmd(in, "--dry-run", "echo")
		c.Env = append(c.Env, "RATION_SHARD_COUNT=3", fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
		out, err := c.Output()
		if err != nil {
			t.Fatal(err)
		}
		flag := e.run(in, "--dry-run", "--shard", fmt.Sprintf("%d/3", i), "echo")
		if string(out) != flag.stdout {
			t.Errorf("env shard %d differs from --shard %d/3", i, i)
		}
		got += strings.Count(string(out), "\n")
	}
	if got != 100 {
		t.Errorf("%d inputs over the env shards", got)
	}
	c := e.cmd(in, "--dry-run", "echo")
	c.Env = append(c.Env, "RATION_SHARD_COUNT=3", "JOB_COMPLETION_INDEX=3")
	if err := c.Run(); c.ProcessState.ExitCode() != 255 {
		t.Errorf("index 3 of 3: %v", err)
	}
	// An Indexed Job's index without the count ran every input in every
	// pod: a usage error of one line, nothing run.
	c = e.cmd(in, "--dry-run", "echo")
	c.Env = append(c.Env, "JOB_COMPLETION_INDEX=1")
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	_ = c.Run() // its exit status is checked
	if c.ProcessState.ExitCode() != 255 || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 ||
		!strings.Contains(stderr.String(), "RATION_SHARD_COUNT is not") {
		t.Errorf("index without count: exit %d, stdout %d bytes, stderr %q", c.ProcessState.ExitCode(), stdout.Len(), stderr.String())
	}
}

func (e e2e) argFileDryRunBar(t *testing.T) {
	e.t = t
	f := filepath.Join(t.TempDir(), "in")
	os.WriteFile(f, []byte("a b\n-x\n\nlast"), 0o644)
	r := e.run("", "-a", f, "--dry-run", "cp", "{}", "{.}.bak")
	want := "cp 'a b' 'a b.bak'\ncp -x -x.bak\ncp '' .bak\ncp last last.bak\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, dry run:\n%s\nwant:\n%s", r.code, r.stdout, want)
	}
	r = e.run("", "--bar", "-j", "2", "true", ":::", "1", "2", "3")
	// stderr is not a terminal: --bar writes whole log lines, no "\r".
	if r.code != 0 || !strings.HasPrefix(r.stderr, "ration: [") || !strings.Contains(r.stderr, "3/3 100%") || strings.Contains(r.stderr, "\r") {
		t.Errorf("exit %d, no progress bar: %q", r.code, r.stderr)
	}
	// Total unknown (stdin): counts only.
	r = e.run("1\n2\n3\n", "--bar", "-j", "2", "true")
	if r.code != 0 || !strings.HasPrefix(r.stderr, "ration: 3 done, 0 failed, 0 running") || strings.Contains(r.stderr, "\r") {
		t.Errorf("exit %d, no progress counts: %q", r.code, r.stderr)
	}
	r = e.run("1\n2\n", "--no-bar", "-j", "2", "true")
	if strings.Contains(r.stderr, "\r") || !strings.Contains(r.stderr, "ration: 2 done, 0 failed") {
		t.Errorf("--no-bar: %q", r.stderr)
	}
}
