package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ration-run/ration/runner/joblog"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// synthLog writes a joblog of n jobs run on slots slots: every 13th job
// fails, every 39th fails once and succeeds on a retry (two lines), and
// commands carry characters that must be escaped.
func synthLog(t testing.TB, n, slots int) (log []byte, lines, failedLines, finalFailed int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	w := joblog.NewWriter(&buf)
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	free := make([]time.Time, slots)
	base := time.Unix(1795216618, 0)
	for i := range free {
		free[i] = base
	}
	next := func() int { // the slot that frees up first
		best := 0
		for i := range free {
			if free[i].Before(free[best]) {
				best = i
			}
		}
		return best
	}
	for seq := int64(1); seq <= int64(n); seq++ {
		cmd := fmt.Sprintf(`process --in 'file <%d> & "q"' </dev/null`, seq)
		if seq == 7 {
			cmd = "echo \xff\xfe invalid utf-8 \x01 ]]> <!-- -->"
		}
		attempts := 1
		if seq%41 == 0 {
			attempts = 2
		}
		for a := 1; a <= attempts; a++ {
			s := next()
			rt := time.Duration(50+rng.IntN(400)) * time.Millisecond
			if seq%97 == 0 {
				rt *= 8 // a few stragglers
			}
			e := joblog.Entry{Seq: seq, Host: ":", Start: free[s], Runtime: rt, Command: cmd}
			fail := seq%13 == 0 || (attempts == 2 && a == 1)
			if fail {
				e.Exitval = 1
				failedLines++
				if a == attempts {
					finalFailed++
				}
			}
			if seq == 26 {
				e.Exitval, e.Signal = -1, 9
			}
			if err := w.Write(e); err != nil {
				t.Fatal(err)
			}
			lines++
			free[s] = free[s].Add(rt + time.Duration(rng.IntN(20))*time.Millisecond)
		}
	}
	return buf.Bytes(), lines, failedLines, finalFailed
}

// jobs returns the jobs of run.
func jobs(t *testing.T, run *Run) []Job {
	t.Helper()
	var out []Job
	for j, err := range run.Jobs() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	return out
}

// bar is a job rectangle as the tests read it back.
type bar struct {
	class                      string
	seq, exit, attempt, lineNo int
	x, w                       float64
}

// parseBars parses an SVG or XHTML document strictly as XML and returns its
// job bars and every attribute named href or src.
func parseBars(t *testing.T, doc []byte) (bars []bar, refs []string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attr := map[string]string{}
		for _, a := range se.Attr {
			attr[a.Name.Local] = a.Value
			if a.Name.Local == "href" || a.Name.Local == "src" {
				refs = append(refs, a.Value)
			}
		}
		if se.Name.Local == "link" || se.Name.Local == "script" || se.Name.Local == "image" || se.Name.Local == "img" {
			refs = append(refs, "<"+se.Name.Local+">")
		}
		if se.Name.Local != "rect" || !strings.Contains(" "+attr["class"]+" ", " job ") {
			continue
		}
		num := func(k string) int {
			v, err := strconv.Atoi(attr[k])
			if err != nil {
				t.Fatalf("bar attribute %s=%q: %v", k, attr[k], err)
			}
			return v
		}
		fl := func(k string) float64 {
			v, err := strconv.ParseFloat(attr[k], 64)
			if err != nil {
				t.Fatalf("bar attribute %s=%q: %v", k, attr[k], err)
			}
			return v
		}
		bars = append(bars, bar{class: attr["class"], seq: num("data-seq"), exit: num("data-exit"),
			attempt: num("data-attempt"), lineNo: num("data-line"), x: fl("x"), w: fl("width")})
	}
	return bars, refs
}

func checkBars(t *testing.T, bars []bar, lines, failedLines, finalFailed, wantRetries int) {
	t.Helper()
	if len(bars) != lines {
		t.Errorf("%d bars, want one per joblog line: %d", len(bars), lines)
	}
	seen := map[int]bool{}
	failed, red, retries := 0, 0, 0
	for _, b := range bars {
		if seen[b.lineNo] {
			t.Errorf("line %d drawn twice", b.lineNo)
		}
		seen[b.lineNo] = true
		isFailed := strings.Contains(" "+b.class+" ", " failed ")
		if isFailed != (b.exit != 0) {
			t.Errorf("bar of seq %d exit %d has class %q", b.seq, b.exit, b.class)
		}
		if isFailed {
			failed++
			if !strings.Contains(b.class, "retried") {
				red++
			}
		}
		if strings.Contains(" "+b.class+" ", " retry ") != (b.attempt > 1) {
			t.Errorf("bar of seq %d attempt %d has class %q", b.seq, b.attempt, b.class)
		}
		if b.attempt > 1 {
			retries++
		}
		if b.x < marginL-0.01 || b.x+b.w > marginL+plotW+1 || b.w <= 0 {
			t.Errorf("bar of seq %d outside the plot: x=%v w=%v", b.seq, b.x, b.w)
		}
	}
	if failed != failedLines || red != finalFailed {
		t.Errorf("%d failed bars (%d final), want %d (%d)", failed, red, failedLines, finalFailed)
	}
	if retries != wantRetries {
		t.Errorf("%d retry attempts marked, want %d", retries, wantRetries)
	}
}

func TestReport500Jobs(t *testing.T) {
	log, lines, failedLines, finalFailed := synthLog(t, 500, 8)
	run, err := Read(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if run.Rows != 8 {
		t.Errorf("rows = %d, want the 8 slots", run.Rows)
	}
	tot := run.Totals()
	if tot.Jobs != 500 || tot.Attempts != lines || tot.Failed != finalFailed || tot.Succeeded != 500-finalFailed || tot.Retried != 500/41 {
		t.Errorf("totals = %+v (lines %d, final failures %d)", tot, lines, finalFailed)
	}
	if tot.PeakConcurrency != 8 || tot.MeanConcurrency <= 1 || tot.MeanConcurrency > 8 {
		t.Errorf("concurrency peak %d mean %v", tot.PeakConcurrency, tot.MeanConcurrency)
	}

	var svg, html bytes.Buffer
	if err := run.WriteSVG(&svg, Options{CPUs: 6, Title: "500 jobs <&>"}); err != nil {
		t.Fatal(err)
	}
	if err := run.WriteHTML(&html, Options{CPUs: 6, Title: "500 jobs <&>"}); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("RATION_REPORT_OUT"); dir != "" { // to look at them
		os.WriteFile(filepath.Join(dir, "synth.svg"), svg.Bytes(), 0o644)
		os.WriteFile(filepath.Join(dir, "synth.html"), html.Bytes(), 0o644)
	}

	bars, refs := parseBars(t, svg.Bytes())
	checkBars(t, bars, lines, failedLines, finalFailed, 500/41)
	if len(refs) != 0 {
		t.Errorf("SVG references %q", refs)
	}
	if !strings.Contains(svg.String(), `class="budget"`) {
		t.Error("SVG lacks the CPU budget line")
	}

	hbars, refs := parseBars(t, html.Bytes())
	checkBars(t, hbars, lines, failedLines, finalFailed, 500/41)
	if len(refs) != 0 {
		t.Errorf("HTML references %q", refs)
	}
	for _, bad := range []string{"http://", "https://", "//"} {
		for _, attr := range []string{`src="`, `href="`, `url(`} {
			if strings.Contains(html.String(), attr+bad) {
				t.Errorf("HTML has an external reference %s%s", attr, bad)
			}
		}
	}
	if strings.Contains(html.String(), "<script") {
		t.Error("HTML has a script")
	}
	// The failed table lists every job that failed for good.
	if n := strings.Count(html.String(), `<tr class="bad" data-seq=`); n < finalFailed {
		t.Errorf("%d failed rows in the tables, want at least %d", n, finalFailed)
	}
	if !strings.Contains(html.String(), "file &lt;13&gt; &amp; &#34;q&#34;") {
		t.Error("command not escaped as expected in HTML")
	}
}

func TestGNUParallelJoblog(t *testing.T) {
	if _, err := exec.LookPath("parallel"); err != nil {
		t.Skip("GNU parallel is not installed")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "joblog")
	// Jobs 3, 6, 9 fail; one command has characters that need escaping.
	cmd := exec.Command("parallel", "--will-cite", "-j3", "--joblog", path,
		`sleep 0.0{}; echo '<a href="x">&</a>' >/dev/null; test $(({} % 3)) -ne 0`, ":::", "1", "2", "3", "4", "5", "6", "7", "8", "9")
	if out, err := cmd.CombinedOutput(); err == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("parallel: %v (want exit 3)\n%s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if tot := run.Totals(); tot.Jobs != 9 || tot.Failed != 3 || run.Rows > 3 || len(run.Warnings) != 0 {
		t.Errorf("totals %+v, rows %d, warnings %q", tot, run.Rows, run.Warnings)
	}
	var svg bytes.Buffer
	if err := run.WriteSVG(&svg, Options{}); err != nil {
		t.Fatal(err)
	}
	bars, _ := parseBars(t, svg.Bytes())
	checkBars(t, bars, 9, 3, 3, 0)
	if strings.Contains(svg.String(), `class="budget"`) {
		t.Error("budget line drawn without CPUs")
	}
}

func TestRowsAreGreedy(t *testing.T) {
	at := func(s float64) time.Time { return time.Unix(1000, 0).Add(time.Duration(s * float64(time.Second))) }
	var buf bytes.Buffer
	w := joblog.NewWriter(&buf)
	for i, iv := range [][2]float64{{0, 10}, {1, 3}, {3, 5}, {4, 6}, {6, 7}, {0.5, 1}} {
		w.Write(joblog.Entry{Seq: int64(i + 1), Start: at(iv[0]), Runtime: time.Duration((iv[1] - iv[0]) * float64(time.Second)), Command: "c"})
	}
	run, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// A [0,10] row 0; F [0.5,1] row 1; B [1,3] row 1 (F ended at 1);
	// C [3,5] row 1; D [4,6] row 2; E [6,7] row 1.
	want := []int{0, 1, 1, 2, 1, 1}
	for i, j := range jobs(t, run) {
		if j.Row != want[i] {
			t.Errorf("job %d in row %d, want %d", j.Seq, j.Row, want[i])
		}
	}
	if run.Rows != 3 {
		t.Errorf("rows = %d, want 3", run.Rows)
	}
	steps := run.Concurrency()
	peak := 0
	for _, s := range steps {
		peak = max(peak, s.Running)
	}
	if peak != run.Rows || steps[len(steps)-1].Running != 0 {
		t.Errorf("concurrency steps %v", steps)
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Read(strings.NewReader("")); !errors.Is(err, ErrNoEntries) {
		t.Errorf("empty: %v", err)
	}
	if _, err := Read(strings.NewReader(joblog.Header + "\n")); !errors.Is(err, ErrNoEntries) {
		t.Errorf("header only: %v", err)
	}
	if _, err := Read(strings.NewReader("garbage\nmore garbage\n")); !errors.Is(err, ErrNoEntries) || !strings.Contains(err.Error(), "2 malformed") {
		t.Errorf("garbage: %v", err)
	}
	run, err := Read(strings.NewReader(joblog.Header + "\n1\t:\t1000.000\t1.000\t0\t0\t0\t0\tok\nnot a line\n2\t:\t1000.5\t0\t0\t0\t0\t0\tzero\n"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Len() != 2 || run.Skipped != 1 || !strings.Contains(run.Warnings[0], "line 3") {
		t.Errorf("jobs %d skipped %d warnings %q", run.Len(), run.Skipped, run.Warnings)
	}
	// Only instantaneous jobs at one instant: still drawable.
	run, err = Read(strings.NewReader("1\t:\t1000\t0\t0\t0\t0\t0\ta\n2\t:\t1000\t0\t0\t0\t1\t0\tb\n"))
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := run.WriteSVG(&svg, Options{}); err != nil {
		t.Fatal(err)
	}
	bars, _ := parseBars(t, svg.Bytes())
	checkBars(t, bars, 2, 1, 1, 0)
}

func BenchmarkReport(b *testing.B) {
	log, _, _, _ := synthLog(b, 20000, 16)
	for b.Loop() {
		run, err := Read(bytes.NewReader(log))
		if err != nil {
			b.Fatal(err)
		}
		if err := run.WriteHTML(io.Discard, Options{CPUs: 8}); err != nil {
			b.Fatal(err)
		}
	}
}

// Example renders a two-job joblog as SVG and counts its bars.
func Example() {
	log := joblog.Header + "\n" +
		"1\t:\t1795216618.196\t     1.500\t0\t2\t0\t0\techo a\n" +
		"2\t:\t1795216618.201\t     0.250\t0\t0\t1\t0\tfalse\n"
	run, err := Read(strings.NewReader(log))
	if err != nil {
		fmt.Println(err)
		return
	}
	var svg strings.Builder
	if err := run.WriteSVG(&svg, Options{CPUs: 2}); err != nil {
		fmt.Println(err)
		return
	}
	t := run.Totals()
	fmt.Println(t.Jobs, "jobs,", t.Failed, "failed, peak", t.PeakConcurrency)
	fmt.Println(strings.Count(svg.String(), `class="job `), "bars,", strings.Count(svg.String(), `class="job failed`), "failed")
	// Output:
	// 2 jobs, 1 failed, peak 2
	// 2 bars, 1 failed
}

// TestGNUParallelFixture reads a joblog GNU parallel 20221122 wrote for 500
// jobs at -j8 on a loaded 2-CPU machine, followed by one --resume-failed
// pass (the run behind docs/img/report.png): failures, re-runs with the
// same Seq, and concurrency that never reaches -j8 for long.
func TestGNUParallelFixture(t *testing.T) {
	f, err := os.Open("testdata/gnu-parallel-500.joblog")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	tot := run.Totals()
	if tot.Jobs != 500 || tot.Attempts != 534 || tot.Retried != 34 || tot.Failed != 21 || tot.Succeeded != 479 || run.Rows != 8 {
		t.Errorf("totals %+v rows %d", tot, run.Rows)
	}
	var svg bytes.Buffer
	if err := run.WriteSVG(&svg, Options{CPUs: 6}); err != nil {
		t.Fatal(err)
	}
	bars, _ := parseBars(t, svg.Bytes())
	// 34 first attempts failed and were re-run; 21 of the re-runs failed too.
	checkBars(t, bars, 534, 34+21, 21, 34)
}

// TestRoundingIsNotOverlap feeds logs as a -j 1 or -j 2 run writes them:
// each job starts right after the previous one on its slot ended, but the
// millisecond times make it look as if it started up to 1.5 ms earlier.
// Such a log must not show more rows than slots; an overlap longer than
// the rounding must still count.
func TestRoundingIsNotOverlap(t *testing.T) {
	line := func(seq int, start, runtime string) string {
		return fmt.Sprintf("%d\t:\t%s\t%10s\t0\t0\t0\t0\tjob %d\n", seq, start, runtime, seq)
	}
	for _, tc := range []struct {
		name     string
		log      string
		wantRows int
		wantRes  time.Duration
	}{
		{"back to back, 1 ms overlap", line(1, "1000.000", "0.050") + line(2, "1000.049", "0.050") + line(3, "1000.098", "0.001") + line(4, "1000.098", "0.020"), 1, time.Millisecond},
		{"two slots, 1 ms overlaps", line(1, "1000.000", "0.040") + line(2, "1000.000", "0.030") + line(3, "1000.029", "0.031") + line(4, "1000.039", "0.010") + line(5, "1000.059", "0.100"), 2, time.Millisecond},
		{"3 ms overlap is real", line(1, "1000.000", "0.050") + line(2, "1000.047", "0.050"), 2, time.Millisecond},
		{"same start, both long", line(1, "1000.000", "0.050") + line(2, "1000.000", "0.050"), 2, 10 * time.Millisecond},
		{"instant jobs inside a busy slot", line(1, "1000.000", "0.050") + line(2, "1000.010", "0.000") + line(3, "1000.020", "0.001"), 1, time.Millisecond},
		{"whole seconds, 3 s overlap", line(1, "1000", "4") + line(2, "1001", "3") + line(3, "1004", "1"), 2, time.Second},
		{"whole seconds, 1 s overlap is rounding", line(1, "1000", "3") + line(2, "1002", "2"), 1, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := Read(strings.NewReader(joblog.Header + "\n" + tc.log))
			if err != nil {
				t.Fatal(err)
			}
			peak := 0
			for _, s := range run.Concurrency() {
				peak = max(peak, s.Running)
			}
			if run.Rows != tc.wantRows || run.Totals().PeakConcurrency != tc.wantRows || peak != tc.wantRows || run.Resolution != tc.wantRes {
				t.Errorf("rows %d, peak %d, curve peak %d, resolution %v; want %d rows at %v", run.Rows, run.Totals().PeakConcurrency, peak, run.Resolution, tc.wantRows, tc.wantRes)
			}
			for _, j := range jobs(t, run) {
				if j.Row < 0 || j.Row >= run.Rows {
					t.Errorf("job %d in row %d of %d", j.Seq, j.Row, run.Rows)
				}
			}
		})
	}
}

// TestJoblogChangedWhileWriting: the writers read the joblog again. Lines
// appended after Read are left out; a joblog truncated or rewritten since
// fails with ErrChanged rather than drawing other jobs.
func TestJoblogChangedWhileWriting(t *testing.T) {
	log, lines, _, _ := synthLog(t, 50, 4)
	path := filepath.Join(t.TempDir(), "joblog")
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	app, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	app.WriteString("999\t:\t1795216618.000\t1.000\t0\t0\t0\t0\tappended\n")
	app.Close()
	var svg bytes.Buffer
	if err := run.WriteSVG(&svg, Options{}); err != nil {
		t.Fatalf("appended: %v", err)
	}
	if bars, _ := parseBars(t, svg.Bytes()); len(bars) != lines {
		t.Errorf("appended: %d bars, want the %d lines Read saw", len(bars), lines)
	}

	other, _, _, _ := synthLog(t, 50, 2) // other start times
	for name, content := range map[string][]byte{
		"truncated": log[:len(log)/2],
		"rewritten": other,
	} {
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := run.WriteHTML(io.Discard, Options{}); !errors.Is(err, ErrChanged) {
			t.Errorf("%s: WriteHTML: %v, want ErrChanged", name, err)
		}
	}
}

// TestLineTooLongIsSkipped: a line longer than joblog.MaxReadLine (a
// binary file appended by mistake, say) is skipped with a warning like any
// malformed line, and the rest of the log is drawn. It used to fail the
// whole report.
func TestLineTooLongIsSkipped(t *testing.T) {
	log := joblog.Header + "\n1\t:\t1000.000\t1.000\t0\t0\t0\t0\tok\n" +
		"2\t:\t1000.500\t1.000\t0\t0\t0\t0\t" + strings.Repeat("x", joblog.MaxReadLine) + "\n" +
		"3\t:\t1001.000\t1.000\t0\t0\t1\t0\tfails\n"
	run, err := Read(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if run.Len() != 2 || run.Skipped != 1 || !strings.Contains(run.Warnings[0], "line 3") || !strings.Contains(run.Warnings[0], "longer than") {
		t.Fatalf("jobs %d, skipped %d, warnings %q", run.Len(), run.Skipped, run.Warnings)
	}
	var svg bytes.Buffer
	if err := run.WriteSVG(&svg, Options{}); err != nil {
		t.Fatal(err)
	}
	bars, _ := parseBars(t, svg.Bytes())
	checkBars(t, bars, 2, 1, 1, 0)
}

// TestFarApartTimesDoNotHang: a corrupt Starttime (a year 33658 beside
// 1970, as joblog.ParseLine accepts up to 1e12 s) makes the run span more
// than a time.Duration holds. The time axis looped forever on it: its
// tick counter overflowed past the saturated span.
func TestFarApartTimesDoNotHang(t *testing.T) {
	log := "1\t:\t0.000\t1.000\t0\t0\t0\t0\ta\n2\t:\t999999999999.000\t1.000\t0\t0\t0\t0\tb\n"
	done := make(chan error, 1)
	go func() {
		run, err := Read(strings.NewReader(log))
		if err == nil {
			err = run.WriteHTML(io.Discard, Options{})
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second): // a hang guard: it takes milliseconds
		t.Fatal("WriteHTML did not return in 20s")
	}
}

// TestHugeRuntimeIsMalformed: a JobRuntime longer than a time.Duration
// holds (292 years) used to wrap around, and the report showed a mean
// concurrency of -3890459610; such a line is malformed.
func TestHugeRuntimeIsMalformed(t *testing.T) {
	run, err := Read(strings.NewReader("1\t:\t1000.000\t900000000000\t0\t0\t0\t0\ta\n2\t:\t1000.000\t1.000\t0\t0\t0\t0\tb\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tot := run.Totals(); run.Skipped != 1 || tot.Attempts != 1 || tot.MeanConcurrency != 1 {
		t.Errorf("skipped %d, totals %+v; want the huge line skipped", run.Skipped, tot)
	}
}
