package reportcmd

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/joblog"
)

func runReport(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// writeJoblog writes n jobs, every 5th failed, to a file and returns its path.
func writeJoblog(t *testing.T, n int, extra string) string {
	t.Helper()
	var buf bytes.Buffer
	w := joblog.NewWriter(&buf)
	w.WriteHeader()
	base := time.Unix(1795216618, 0)
	for i := range n {
		e := joblog.Entry{Seq: int64(i + 1), Start: base.Add(time.Duration(i%4) * 100 * time.Millisecond).Add(time.Duration(i/4) * time.Second),
			Runtime: 900 * time.Millisecond, Command: fmt.Sprintf("work <%d> & 'x'", i+1)}
		if (i+1)%5 == 0 {
			e.Exitval = 2
		}
		w.Write(e)
	}
	buf.WriteString(extra)
	path := filepath.Join(t.TempDir(), "run.joblog")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// countBars parses doc as XML and counts job bars and failed job bars.
func countBars(t *testing.T, doc string) (bars, failed int) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			for _, a := range se.Attr {
				if a.Name.Local == "class" && strings.HasPrefix(a.Value, "job ") {
					bars++
					if strings.Contains(a.Value, "failed") {
						failed++
					}
				}
			}
		}
	}
}

func TestReportFormats(t *testing.T) {
	log := writeJoblog(t, 40, "")
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		file string // "" for stdout
		svg  bool
	}{
		{[]string{log}, "", false},
		{[]string{log, "--format", "svg"}, "", true},
		{[]string{log, "-o", filepath.Join(dir, "r.svg"), "--cpus", "3"}, "r.svg", true},
		{[]string{log, "-o", filepath.Join(dir, "r.HTML")}, "r.HTML", false},
		{[]string{"-o", filepath.Join(dir, "r.out"), "--format=svg", log}, "r.out", true},
		{[]string{log, "--cpus", "auto", "-o", filepath.Join(dir, "auto.htm")}, "auto.htm", false},
	} {
		code, out, errs := runReport(t, "", tt.args...)
		if code != 0 || errs != "" {
			t.Errorf("report %q: exit %d, stderr %q", tt.args, code, errs)
			continue
		}
		doc := out
		if tt.file != "" {
			if out != "" {
				t.Errorf("report %q wrote to stdout too", tt.args)
			}
			b, err := os.ReadFile(filepath.Join(dir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			doc = string(b)
		}
		if isSVG := strings.HasPrefix(doc, "<?xml"); isSVG != tt.svg {
			t.Errorf("report %q: SVG %v, want %v", tt.args, isSVG, tt.svg)
		}
		if bars, failed := countBars(t, doc); bars != 40 || failed != 8 {
			t.Errorf("report %q: %d bars, %d failed; want 40, 8", tt.args, bars, failed)
		}
		if strings.Contains(doc, "budget") != slicesContains(tt.args, "--cpus") {
			t.Errorf("report %q: budget line presence wrong", tt.args)
		}
	}
	// No temporary files are left next to the outputs.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left over %s", e.Name())
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestReportStdinAndWarnings(t *testing.T) {
	b, err := os.ReadFile(writeJoblog(t, 10, "bad line 1\nbad\tline\t2\n3\n4\n5\n6\n7\n"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runReport(t, string(b), "-", "--format", "svg")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if bars, _ := countBars(t, out); bars != 10 {
		t.Errorf("%d bars, want 10", bars)
	}
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if len(lines) != 6 || !strings.Contains(lines[0], "warning: -: skipped line 12:") || !strings.Contains(lines[5], "2 more malformed lines skipped") {
		t.Errorf("warnings:\n%s", errs)
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.log")
	os.WriteFile(empty, []byte(joblog.Header+"\n"), 0o644)
	garbage := filepath.Join(dir, "garbage.log")
	os.WriteFile(garbage, []byte("\x00\x01\x02 not a joblog\n"), 0o644)
	good := writeJoblog(t, 3, "")
	existing := filepath.Join(dir, "keep.html")
	os.WriteFile(existing, []byte("previous report"), 0o644)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "missing JOBLOG"},
		{[]string{filepath.Join(dir, "nope.log")}, "no such file or directory"},
		{[]string{empty}, "empty.log: no job entries"},
		{[]string{garbage}, "1 malformed line, first: line 1: malformed joblog line: 1 field (no tab), want 9"},
		{[]string{dir}, "is a directory"},
		{[]string{good, "extra"}, `unexpected argument "extra"`},
		{[]string{good, "-o", filepath.Join(dir, "r.png")}, `cannot tell the format from`},
		{[]string{good, "--format", "pdf"}, `invalid --format "pdf"`},
		{[]string{good, "--cpus", "-1"}, `invalid --cpus value "-1"`},
		{[]string{good, "--cpus", "NaN"}, `invalid --cpus value "NaN"`},
		{[]string{good, "-o", filepath.Join(dir, "no", "such", "dir.svg")}, "no such file or directory"},
		{[]string{good, "--bogus"}, "unknown flag: --bogus"},
		{[]string{empty, "-o", existing}, "no job entries"},
	} {
		code, out, errs := runReport(t, "", tt.args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, tt.want) || strings.Count(errs, "\n") != 1 ||
			!strings.HasPrefix(errs, "ration report: ") {
			t.Errorf("report %q: exit %d, stdout %q, stderr %q; want 255 and one line containing %q", tt.args, code, out, errs, tt.want)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "previous report" {
		t.Errorf("a failed report overwrote the previous one: %q", b)
	}
}

func TestReportHelp(t *testing.T) {
	code, out, _ := runReport(t, "", "--help")
	if code != 0 || !strings.Contains(out, "usage: ration report JOBLOG") || !strings.Contains(out, "--cpus") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

// TestReportGNUParallel renders a joblog that GNU parallel itself wrote.
func TestReportGNUParallel(t *testing.T) {
	if _, err := exec.LookPath("parallel"); err != nil {
		t.Skip("GNU parallel is not installed")
	}
	log := filepath.Join(t.TempDir(), "gnu.joblog")
	cmd := exec.Command("parallel", "--will-cite", "-j4", "--joblog", log, "exit $(({} % 4 == 0))", ":::", "1", "2", "3", "4", "5", "6", "7", "8")
	if out, err := cmd.CombinedOutput(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Fatalf("parallel: %v\n%s", err, out)
	}
	code, out, errs := runReport(t, "", log, "--format", "svg")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if bars, failed := countBars(t, out); bars != 8 || failed != 2 {
		t.Errorf("%d bars, %d failed; want 8, 2", bars, failed)
	}
}
