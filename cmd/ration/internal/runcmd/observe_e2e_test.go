//go:build unix

package runcmd

// Acceptance tests of watching a run (metrics, structured logs, stall watchdog)
// against the built binary. Each test fails, naming the missing flags,
// when `ration run --help` does not list the flags it needs: a renamed
// flag must not silently skip its acceptance test. The helpers here (acc*)
// are shared with worker_e2e_test.go.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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

// accHelp returns the output of `ration run --help`.
func accHelp(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "run", "--help").Output()
	if err != nil {
		t.Fatalf("ration run --help: %v", err)
	}
	return string(out)
}

// accHas reports whether help lists --flag (as a whole flag name; a
// flag's other names follow it after a comma).
func accHas(help, flag string) bool {
	return regexp.MustCompile(`(?m)(^|[\s,])--` + regexp.QuoteMeta(flag) + `(\s|=|,|$)`).MatchString(help)
}

// accNeed fails t unless help lists every flag.
func accNeed(t *testing.T, help string, flags ...string) {
	t.Helper()
	var missing []string
	for _, f := range flags {
		if !accHas(help, f) {
			missing = append(missing, "--"+f)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("`ration run --help` does not list %s", strings.Join(missing, ", "))
	}
}

// accProc is a running `ration run`.
type accProc struct {
	t              *testing.T
	cmd            *exec.Cmd
	stdout, stderr testutil.Buffer
	done           chan struct{}
}

// accStart starts `ration run ARGS` with stdin, and kills it at the end of
// the test if it is still running. With cgroups, the process first moves
// itself into each of those cgroup directories (only ration and what it
// starts are ever placed there) and then execs ration.
func accStart(t *testing.T, bin string, stdin io.Reader, env, cgroups []string, args ...string) *accProc {
	t.Helper()
	argv := append([]string{bin, "run"}, args...)
	if len(cgroups) > 0 {
		script := `for cg in $CGROUPS; do echo $$ > "$cg/cgroup.procs" || exit 250; done; exec "$@"`
		argv = append([]string{"/bin/sh", "-c", script, "sh"}, argv...)
		env = append(env, "CGROUPS="+strings.Join(cgroups, " "))
	}
	p := &accProc{t: t, cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{})}
	p.cmd.Stdin = stdin
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.Env = append(os.Environ(), "RATION_JOBS=", "RATION_SHARD_COUNT=", "JOB_COMPLETION_INDEX=")
	p.cmd.Env = append(p.cmd.Env, env...)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %q: %v", argv, err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		// Let ration stop its jobs (the tests pass a short --term-timeout),
		// then make sure.
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// exited reports whether the process has ended.
func (p *accProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to d for the process to end and returns its exit status.
func (p *accProc) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.t.Fatalf("ration run still running after %v\nstderr:\n%s", d, p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// accFreeAddr returns a 127.0.0.1 address with a port that was free a
// moment ago.
func accFreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// accClient is an HTTP client that keeps no connections (goleak checks the
// package for leaked goroutines at the end).
func accClient(t *testing.T) *http.Client {
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}
}

// accGet returns the status code and body of GET url.
func accGet(c *http.Client, url string) (int, string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// accScrape reads the Prometheus text exposition at url into a map from
// series (name plus labels, as written) to value.
func accScrape(c *http.Client, url string) (map[string]float64, error) {
	code, body, err := accGet(c, url)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", url, code)
	}
	m := map[string]float64{}
	for line := range strings.Lines(body) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("bad exposition line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("bad exposition line %q: %w", line, err)
		}
		m[line[:i]] = v
	}
	return m, nil
}

// accJoblog parses the complete lines of a joblog (a line being written
// may be partial).
func accJoblog(t *testing.T, path string) []joblog.Entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	var es []joblog.Entry
	for e, err := range joblog.Entries(bytes.NewReader(b)) {
		if err != nil {
			t.Fatalf("joblog %s: %v", path, err)
		}
		es = append(es, e)
	}
	return es
}

// accCount returns how many entries succeeded and failed, and fails t if a
// job number appears twice.
func accCount(t *testing.T, es []joblog.Entry) (ok, failed int) {
	t.Helper()
	seen := map[int64]bool{}
	for _, e := range es {
		if seen[e.Seq] {
			t.Errorf("joblog has job %d twice", e.Seq)
		}
		seen[e.Seq] = true
		if e.Succeeded() {
			ok++
		} else {
			failed++
		}
	}
	return ok, failed
}

// accJSONLines parses every line of s as a JSON object; lines that are
// not JSON are returned apart.
func accJSONLines(s string) (recs []map[string]any, other []string) {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 16<<20) // a stall record carries all goroutine stacks
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			other = append(other, sc.Text())
			continue
		}
		recs = append(recs, m)
	}
	return recs, other
}

// the metric names the counters test reads.
const (
	mStarted     = "ration_jobs_started_total"
	mSucceeded   = "ration_jobs_succeeded_total"
	mFailed      = "ration_jobs_failed_total"
	mQuarantined = "ration_jobs_quarantined_total"
	mRunning     = "ration_jobs_running"
	mRetried     = "ration_jobs_retried_total"
	mPoolSize    = "ration_pool_size"
)

// TestObserveMetricsE2E is the /metrics acceptance test: 40 jobs, 4
// of them failing, the last one held until the test releases it. /metrics
// is scraped throughout; while only the held job runs, the counters must
// equal the joblog's counts (started = succeeded + failed + quarantined +
// running, running = 1), and once it is released the final joblog must be
// that scrape plus the one job.
func TestObserveMetricsE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	accNeed(t, accHelp(t, bin), "metrics-addr")
	dir := t.TempDir()
	jl, release := filepath.Join(dir, "joblog"), filepath.Join(dir, "release")
	addr := accFreeAddr(t)
	const n = 40
	failing := map[int]bool{3: true, 13: true, 23: true, 33: true}
	script := `case "$0" in
	40) while [ ! -e "$RELEASE" ]; do sleep 0.05; done ;;
	3|13|23|33) sleep 0.1; exit 1 ;;
	*) sleep 0.$(( $0 % 3 + 1 )) ;;
	esac`
	args := []string{"--metrics-addr", addr, "--joblog", jl, "-j", "4", "--term-timeout", "1s", "sh", "-c", script, ":::"}
	for i := 1; i <= n; i++ {
		args = append(args, strconv.Itoa(i))
	}
	p := accStart(t, bin, nil, []string{"RELEASE=" + release}, nil, args...)
	c := accClient(t)
	url := "http://" + addr + "/metrics"

	var scrapes, midRun int
	var last map[string]float64
	check := func(m map[string]float64) {
		t.Helper()
		for _, name := range []string{mStarted, mSucceeded, mFailed, mQuarantined, mRunning, mRetried, mPoolSize} {
			if _, ok := m[name]; !ok {
				t.Fatalf("scrape %d lacks %s", scrapes, name)
			}
		}
		ended := m[mSucceeded] + m[mFailed] + m[mQuarantined]
		if m[mRunning] < 0 || m[mRunning] > 4 || m[mStarted] > n || ended > m[mStarted] || m[mPoolSize] != 4 {
			t.Errorf("scrape %d: started %v, ended %v, running %v, pool size %v: want 0 <= running <= 4 = pool size, ended <= started <= %d",
				scrapes, m[mStarted], ended, m[mRunning], m[mPoolSize], n)
		}
		for _, name := range []string{mStarted, mSucceeded, mFailed, mQuarantined} {
			if last != nil && m[name] < last[name] {
				t.Errorf("scrape %d: counter %s went down from %v to %v", scrapes, name, last[name], m[name])
			}
		}
		if ended > 0 && ended < n-1 {
			midRun++
		}
		last = m
	}
	// Scrape until the 39 jobs that end on their own have ended, in the
	// joblog and in the counters.
	deadline := time.Now().Add(90 * time.Second)
	var es []joblog.Entry
	for {
		if p.exited() {
			t.Fatalf("ration exited before the held job was released (exit %d)\nstderr:\n%s", p.cmd.ProcessState.ExitCode(), p.stderr.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 90s: %d joblog lines, last scrape %v\nstderr:\n%s", len(es), last, p.stderr.String())
		}
		m, err := accScrape(c, url)
		if err != nil {
			if scrapes > 0 {
				t.Fatalf("scrape %d: %v", scrapes+1, err)
			}
			time.Sleep(50 * time.Millisecond) // not listening yet
			continue
		}
		scrapes++
		check(m)
		es = accJoblog(t, jl)
		if len(es) == n-1 && m[mSucceeded]+m[mFailed]+m[mQuarantined] == n-1 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Only the held job runs now: nothing may change between scrapes.
	for range 2 {
		time.Sleep(200 * time.Millisecond)
		m, err := accScrape(c, url)
		if err != nil {
			t.Fatal(err)
		}
		scrapes++
		check(m)
	}
	ok, failed := accCount(t, es)
	m := last
	t.Logf("%d scrapes (%d mid-run); while the held job runs: started %v succeeded %v failed %v quarantined %v running %v retried %v; joblog %d ok %d failed",
		scrapes, midRun, m[mStarted], m[mSucceeded], m[mFailed], m[mQuarantined], m[mRunning], m[mRetried], ok, failed)
	if midRun == 0 {
		t.Errorf("no scrape saw the run in progress (%d scrapes)", scrapes)
	}
	if m[mStarted] != n || m[mRunning] != 1 || m[mStarted] != m[mSucceeded]+m[mFailed]+m[mQuarantined]+m[mRunning] {
		t.Errorf("started %v, running %v: want %d = succeeded + failed + quarantined + running(1)", m[mStarted], m[mRunning], n)
	}
	if m[mSucceeded] != float64(ok) || m[mFailed] != float64(failed) || m[mQuarantined] != 0 || m[mRetried] != 0 {
		t.Errorf("counters succeeded %v failed %v quarantined %v retried %v; joblog %d ok, %d failed, none quarantined or retried",
			m[mSucceeded], m[mFailed], m[mQuarantined], m[mRetried], ok, failed)
	}
	if ok != n-1-len(failing) || failed != len(failing) {
		t.Errorf("joblog so far: %d ok, %d failed; want %d, %d", ok, failed, n-1-len(failing), len(failing))
	}
	// pprof is served only with --debug.
	if code, _, err := accGet(c, "http://"+addr+"/debug/pprof/"); err != nil || code != http.StatusNotFound {
		t.Errorf("GET /debug/pprof/ without --debug: %d %v, want 404", code, err)
	}

	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(60 * time.Second); code != len(failing) {
		t.Errorf("exit %d, want %d (the failed jobs)\nstderr:\n%s", code, len(failing), p.stderr.String())
	}
	es = accJoblog(t, jl)
	ok, failed = accCount(t, es)
	if len(es) != n || float64(ok) != m[mSucceeded]+1 || float64(failed) != m[mFailed] {
		t.Errorf("final joblog: %d lines, %d ok, %d failed; want %d lines = the last scrape (%v ok, %v failed) + the released job",
			len(es), ok, failed, n, m[mSucceeded], m[mFailed])
	}
	for _, e := range es {
		if want := !failing[int(e.Seq)]; e.Succeeded() != want {
			t.Errorf("job %d: exit %d signal %d, want success %v", e.Seq, e.Exitval, e.Signal, want)
		}
	}
	noChildrenLeft(t)
}

// stallScript runs as `sh -c stallScript INPUT`: the input "slow" writes
// its pid (which exec keeps for sleep) to $PIDFILE and sleeps; others end
// at once.
const stallScript = `case "$0" in
slow) echo $$ > "$PIDFILE"; exec sleep 4 ;;
bad) exit 3 ;;
esac
exit 0`

// TestObserveStallE2E is the stall acceptance test: one job sleeps 4s
// past --stall-timeout 1s; stderr carries the stall report, with that job's
// input and pid, exactly once.
func TestObserveStallE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	accNeed(t, accHelp(t, bin), "stall-timeout")
	pidfile := filepath.Join(t.TempDir(), "pid")
	inputs := []string{"fast1", "fast2", "slow", "fast3", "fast4"}
	p := accStart(t, bin, nil, []string{"PIDFILE=" + pidfile}, nil,
		append([]string{"--stall-timeout", "1s", "-j", "2", "--term-timeout", "1s", "sh", "-c", stallScript, ":::"}, inputs...)...)
	pid := readPid(t, pidfile)
	code := p.wait(60 * time.Second)
	stderr := p.stderr.String()
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "ration: stall: no job finished"); n != 1 {
		t.Fatalf("%d stall reports, want exactly 1\nstderr:\n%s", n, stderr)
	}
	if n := strings.Count(stderr, "ration: end of stall report"); n != 1 {
		t.Errorf("%d ends of stall report, want 1", n)
	}
	report := stderr[strings.Index(stderr, "ration: stall: no job finished"):]
	table, stacks, found := strings.Cut(report, "ration: goroutines of ration")
	if !found || !strings.Contains(stacks, "goroutine ") {
		t.Errorf("stall report without goroutine stacks:\n%s", report)
	}
	var rows [][]string
	for line := range strings.Lines(table) {
		f := strings.Fields(line)
		if len(f) >= 5 && f[0] != "SLOT" && !strings.HasPrefix(line, "ration:") {
			rows = append(rows, f)
		}
	}
	// SLOT PID SEQ RUNNING INPUT [LAST OUTPUT]
	if len(rows) != 1 || rows[0][1] != strconv.Itoa(pid) || rows[0][2] != "3" || rows[0][4] != "slow" {
		t.Errorf("stall table rows %q, want one: the job \"slow\" (seq 3) with pid %d\nreport:\n%s", rows, pid, table)
	}
	t.Logf("stall report:\n%s", table)
	noChildrenLeft(t)
}

// TestObserveJSONLogsE2E: with --log-format json every line ration writes
// to stderr is a JSON object, through hostile inputs, a retried and failed
// job, debug records, and a stall report (whose goroutine stacks are
// multi-line). The stall record names the slow job's input and pid once.
func TestObserveJSONLogsE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	help := accHelp(t, bin)
	accNeed(t, help, "log-format", "debug", "stall-timeout", "metrics-addr")
	pidfile := filepath.Join(t.TempDir(), "pid")
	inputs := append(slices.Clone(hostile), "bad", "slow")
	addr := accFreeAddr(t)
	args := []string{"--log-format", "json", "--debug", "--retries", "2", "--stall-timeout", "1s", "-j", "2", "-0", "--term-timeout", "1s",
		"--metrics-addr", addr, "sh", "-c", stallScript}
	p := accStart(t, bin, strings.NewReader(strings.Join(inputs, "\x00")+"\x00"), []string{"PIDFILE=" + pidfile}, nil, args...)
	pid := readPid(t, pidfile)
	// --debug serves pprof on the metrics address.
	if code, body, err := accGet(accClient(t), "http://"+addr+"/debug/pprof/"); err != nil || code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("GET /debug/pprof/ with --debug: %d %v, want 200 with the profile index", code, err)
	}
	code := p.wait(60 * time.Second)
	stderr := p.stderr.String()
	if code != 1 {
		t.Errorf("exit %d, want 1 (the job \"bad\")", code)
	}
	recs, other := accJSONLines(stderr)
	if len(other) > 0 {
		t.Errorf("%d of %d stderr lines are not JSON objects, e.g. %q", len(other), len(other)+len(recs), other[0])
	}
	byEvent := map[string][]map[string]any{}
	var stalls []map[string]any
	for _, r := range recs {
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := r[k]; !ok {
				t.Errorf("record without %q: %v", k, r)
			}
		}
		if ev, ok := r["event"].(string); ok {
			byEvent[ev] = append(byEvent[ev], r)
		}
		if strings.HasPrefix(fmt.Sprint(r["msg"]), "stall") {
			stalls = append(stalls, r)
		}
	}
	finished := map[string]int{}
	for _, r := range byEvent["job_finished"] {
		in, _ := r["input"].(string)
		finished[in]++
		if in == "bad" && (r["outcome"] != "failed" || r["level"] != "WARN") {
			t.Errorf("job_finished of \"bad\": %v, want outcome failed at WARN", r)
		}
	}
	if len(byEvent["job_finished"]) != len(inputs) {
		t.Errorf("%d job_finished records, want %d (one per input)", len(byEvent["job_finished"]), len(inputs))
	}
	for _, in := range inputs {
		if strings.ToValidUTF8(in, "") == in && finished[in] != 1 {
			t.Errorf("input %q: %d job_finished records, want 1", in, finished[in])
		}
	}
	if n := len(byEvent["job_retried"]); n != 1 || byEvent["job_retried"][0]["input"] != "bad" {
		t.Errorf("job_retried records %v, want one for \"bad\"", byEvent["job_retried"])
	}
	if len(byEvent["job_started"]) != len(inputs)+1 {
		t.Errorf("%d job_started records, want %d (one per attempt)", len(byEvent["job_started"]), len(inputs)+1)
	}
	if len(stalls) != 1 {
		t.Fatalf("%d stall records, want 1: %v", len(stalls), stalls)
	}
	jobs, _ := stalls[0]["jobs"].([]any)
	gs, _ := stalls[0]["goroutines"].(string)
	if len(jobs) != 1 || !strings.Contains(gs, "goroutine ") {
		t.Fatalf("stall record %v: want one running job and the goroutine stacks", stalls[0])
	}
	if j, _ := jobs[0].(map[string]any); j["input"] != "slow" || j["pid"] != float64(pid) {
		t.Errorf("stall record's job %v, want input \"slow\" and pid %d", j, pid)
	}
	t.Logf("%d JSON records; events %v", len(recs), func() map[string]int {
		c := map[string]int{}
		for k, v := range byEvent {
			c[k] = len(v)
		}
		return c
	}())
	noChildrenLeft(t)
}

// accUsage runs each case and wants exit status 255 with one line on
// stderr containing the case's text, and nothing on stdout. A case whose
// flag `ration run --help` does not list fails.
func accUsage(t *testing.T, bin, help string, cases []accUsageCase) {
	t.Helper()
	for _, c := range cases {
		if !accHas(help, c.flag) {
			t.Errorf("%q: `ration run --help` does not list --%s", c.args, c.flag)
			continue
		}
		args := append([]string{"run"}, c.args...)
		if !slices.Contains(c.args, "--worker") {
			args = append(args, "true") // --worker takes no COMMAND
		}
		cmd := exec.Command(bin, append(args, ":::", "x")...)
		cmd.Env = append(os.Environ(), "RATION_JOBS=")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if code != exitUsage || out.Len() > 0 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("run %q: exit %d, stdout %q, stderr %q; want 255 and one line containing %q", c.args, code, out.String(), errb.String(), c.want)
		}
	}
}

type accUsageCase struct {
	flag string
	args []string
	want string
}

// TestObserveUsageE2E: bad values of the flags that watch a run are one-line usage
// errors with exit status 255.
func TestObserveUsageE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	accUsage(t, bin, accHelp(t, bin), []accUsageCase{
		{"log-format", []string{"--log-format", "xml"}, "xml"},
		{"quiet", []string{"--quiet", "--debug"}, "--quiet"},
		{"stall-timeout", []string{"--stall-timeout", "soon"}, "soon"},
		{"stall-timeout", []string{"--stall-timeout", "-5s"}, "-5s"},
		{"slow-factor", []string{"--slow-factor", "-1"}, "-1"},
		{"metrics-addr", []string{"--metrics-addr", "not an address"}, "not an address"},
	})
}

// TestObserveQuietE2E: --quiet prints no job records (a failed job shows in
// the exit status) and no summary line.
func TestObserveQuietE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	accNeed(t, accHelp(t, bin), "quiet")
	p := accStart(t, bin, nil, nil, nil, "--quiet", "-j", "2", "sh", "-c", `exit $0`, ":::", "0", "1", "0")
	code := p.wait(60 * time.Second)
	stderr := p.stderr.String()
	// Issue 17: --quiet prints no line per failed job; the exit status
	// counts them.
	if code != 1 || stderr != "" {
		t.Errorf("exit %d, stderr %q: want 1 and nothing", code, stderr)
	}
}

// TestObserveQuietPortZeroE2E: with --quiet, a metrics port chosen by the
// system (port 0) is still logged, as a warning, since nothing else tells
// it; a port given by the user is not.
func TestObserveQuietPortZeroE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	accNeed(t, accHelp(t, bin), "quiet", "metrics-addr")
	p := accStart(t, bin, nil, nil, nil, "--quiet", "--metrics-addr", "127.0.0.1:0", "true", ":::", "a")
	code := p.wait(60 * time.Second)
	stderr := p.stderr.String()
	if code != 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "serving metrics") ||
		!strings.Contains(stderr, "WARN") || !regexp.MustCompile(`http://127\.0\.0\.1:[1-9][0-9]*/metrics`).MatchString(stderr) {
		t.Errorf("exit %d, stderr %q: want 0 and only the warning with the chosen address", code, stderr)
	}
	p = accStart(t, bin, nil, nil, nil, "--quiet", "--metrics-addr", accFreeAddr(t), "true", ":::", "a")
	if code := p.wait(60 * time.Second); code != 0 || p.stderr.String() != "" {
		t.Errorf("exit %d, stderr %q with a fixed port: want 0 and nothing", code, p.stderr.String())
	}
}

// TestObserveMetricsPortZeroE2E: --metrics-addr 127.0.0.1:0 picks a port
// and logs the URL, which serves the run's metrics.
func TestObserveMetricsPortZeroE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	accNeed(t, accHelp(t, bin), "metrics-addr", "log-format")
	release := filepath.Join(t.TempDir(), "release")
	p := accStart(t, bin, nil, []string{"RELEASE=" + release}, nil, "--metrics-addr", "127.0.0.1:0", "--log-format", "json", "-j", "2",
		"sh", "-c", `[ "$0" = hold ] && while [ ! -e "$RELEASE" ]; do sleep 0.05; done; exit 0`, ":::", "a", "b", "hold")
	var url string
	for deadline := time.Now().Add(30 * time.Second); url == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("no \"serving metrics\" record with a url\nstderr:\n%s", p.stderr.String())
		}
		recs, _ := accJSONLines(p.stderr.String())
		for _, r := range recs {
			if u, ok := r["url"].(string); ok && strings.HasPrefix(u, "http://127.0.0.1:") && !strings.HasSuffix(u, ":0/metrics") {
				url = u
			}
		}
	}
	c := accClient(t)
	var m map[string]float64
	for deadline := time.Now().Add(30 * time.Second); m[mSucceeded] != 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", url, m)
		}
		m, _ = accScrape(c, url)
	}
	if m[mStarted] != 3 || m[mRunning] != 1 {
		t.Errorf("%s: started %v running %v, want 3 and 1", url, m[mStarted], m[mRunning])
	}
	os.WriteFile(release, nil, 0o644)
	if code := p.wait(60 * time.Second); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestObserveJSONStartErrorE2E: a command that cannot be started is
// reported as a JSON record too, with --log-format json. The program is
// the input's ({}): one named on the command line is looked up before
// any job starts.
func TestObserveJSONStartErrorE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	accNeed(t, accHelp(t, bin), "log-format")
	missing := filepath.Join(t.TempDir(), "no-such-command")
	p := accStart(t, bin, nil, nil, nil, "--log-format", "json", "{}", ":::", missing)
	code := p.wait(60 * time.Second)
	stderr := p.stderr.String()
	recs, other := accJSONLines(stderr)
	if code != 1 || len(other) > 0 {
		t.Errorf("exit %d, non-JSON lines %q: want 1 and JSON only", code, other)
	}
	named := false
	for _, r := range recs {
		if r["event"] == "job_finished" && strings.Contains(fmt.Sprint(r["err"]), missing) {
			named = true
		}
	}
	if !named {
		t.Errorf("no job_finished record names %s in its err:\n%s", missing, stderr)
	}
}
