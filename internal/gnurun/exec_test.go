package gnurun

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
)

// TestTermSeqSignals stops a job by its timeout (1 s: time for sh to set
// its traps on a busy machine) with --termseq INT,300,TERM,300,KILL,25:
// the job traps both signals and writes them down, so it must see INT
// then TERM, and end only by SIGKILL, after both waits.
func TestTermSeqSignals(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "got")
	seq := runhook.TermSeq{{Signal: syscall.SIGINT, Wait: 300 * time.Millisecond}, {Signal: syscall.SIGTERM, Wait: 300 * time.Millisecond},
		{Signal: syscall.SIGKILL, Wait: 25 * time.Millisecond}} // INT,300,TERM,300,KILL,25
	script := `trap 'echo INT >>` + log + `' INT; trap 'echo TERM >>` + log + `' TERM; echo ready >>` + log + `; while :; do sleep 0.02; done`
	start := time.Now()
	sum, _, rec, err := run(t, with(runner.Config{Command: []string{"sh", "-c", script}, Input: input.Args([]string{"x"}),
		Timeout: time.Second}, GNU{Exec: GNUExec{TermSeq: seq}}))
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	got, _ := os.ReadFile(log)
	if string(got) != "ready\nINT\nTERM\n" {
		t.Errorf("the job wrote %q; want ready, INT, TERM", got)
	}
	if sum.Failed != 1 {
		t.Errorf("summary %+v", sum)
	}
	if took < time.Second+600*time.Millisecond-50*time.Millisecond {
		t.Errorf("the run took %s: the waits of the sequence (600 ms after the 1 s timeout) were not waited", took)
	}
	if ends := rec.Kind(event.JobFinished); len(ends) != 1 || ends[0].Signal != int(syscall.SIGKILL) {
		t.Errorf("finished %+v; want one job ended by SIGKILL", ends)
	}
}

// TestFiles: with Files each job's stdout goes to a file of its own in
// TmpDir, kept, its stderr nowhere, and the job's output is the file's
// name after its tag, in input order with KeepOrder.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	_, out, _, err := run(t, with(runner.Config{Command: []string{"sh", "-c", `echo out "$1"; echo err "$1" >&2`, "sh", "{}"},
		Input: input.Args([]string{"a", "b", "c"}), KeepOrder: true}, GNU{Tag: true, Exec: GNUExec{Files: true, TmpDir: dir}}))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("output %q; want three names", out)
	}
	for i, l := range lines {
		arg := string(rune('a' + i))
		tag, name, _ := strings.Cut(l, "\t")
		if tag != arg || filepath.Dir(name) != dir || !strings.HasPrefix(filepath.Base(name), "par") || !strings.HasSuffix(name, ".par") {
			t.Errorf("line %d is %q; want %s, a tab and %s/par*.par", i+1, l, arg, dir)
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil || string(data) != "out "+arg+"\n" {
			t.Errorf("%s holds %q (%v); want the job's stdout only", name, data, err)
		}
	}
}

// TestResultsTemplate: --results with replacement strings names each
// job's stdout file, with .err and .seq beside it, or, ending in /, the
// directory of stdout, stderr and seq.
func TestResultsTemplate(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		results string
		files   map[string]string
	}{
		{dir + "/a/{}.x/{1}", map[string]string{"a/p.x/p": "out p\n", "a/p.x/p.err": "err p\n", "a/p.x/p.seq": "1", "a/q.x/q": "out q\n", "a/q.x/q.seq": "2"}},
		{dir + "/b/{#}-{}/", map[string]string{"b/1-p/stdout": "out p\n", "b/1-p/stderr": "err p\n", "b/1-p/seq": "1", "b/2-q/stdout": "out q\n"}},
	} {
		_, out, _, err := run(t, with(runner.Config{Command: []string{"sh", "-c", `echo out "$1"; echo err "$1" >&2`, "sh", "{}"},
			Input: input.Args([]string{"p", "q"})}, GNU{Results: c.results}))
		if err != nil || out != "" {
			t.Fatalf("%s: output %q, %v", c.results, out, err)
		}
		for name, want := range c.files {
			if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
				t.Errorf("--results %s: %s holds %q (%v); want %q", c.results, name, got, err, want)
			}
		}
	}
}

// TestResultsTable: --results NAME.csv writes GNU parallel's header and
// one row per job, quoted as GNU's (white space, quotes doubled, the
// separator), Receive counting stdout only; nothing is printed.
func TestResultsTable(t *testing.T) {
	for _, name := range []string{"t.csv", "t.tsv"} {
		path := filepath.Join(t.TempDir(), name)
		_, out, _, err := run(t, with(runner.Config{Command: []string{"sh", "-c", `printf '%s\n' "$1"; [ "$1" = 'b"c' ] && { echo oops >&2; exit 3; }; true`, "sh", "{}"},
			Input: input.Args([]string{"a", `b"c`, "d e", "f,g", ""}), Jobs: 1}, GNU{Exec: GNUExec{ResultsTable: path}}))
		if err != nil || out != "" {
			t.Fatalf("%s: output %q, %v", name, out, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sep := ","
		if name == "t.tsv" {
			sep = "\t"
		}
		// Starttime and JobRuntime vary: blank them.
		times := regexp.MustCompile(`(?m)^(\d+)` + sep + `:` + sep + `\d+\.\d{3}` + sep + `\d+\.\d{3}` + sep)
		got := times.ReplaceAllString(string(data), "${1}"+sep+":"+sep+"T"+sep+"R"+sep)
		for _, row := range []string{
			"Seq" + sep + "Host" + sep + "Starttime" + sep + "JobRuntime" + sep + "Send" + sep + "Receive" + sep + "Exitval" + sep + "Signal" + sep + "Command" + sep + "V1" + sep + "Stdout" + sep + "Stderr\n",
			sep + "a" + sep + "\"a\n\"" + sep + "\n",
			"2" + sep + ":" + sep + "T" + sep + "R" + sep + "0" + sep + "4" + sep + "3" + sep + "0" + sep,
			sep + `"b""c"` + sep + `"b""c` + "\n\"" + sep + "\"oops\n\"\n",
			sep + `"d e"` + sep + "\"d e\n\"" + sep + "\n",
			sep + sep + "\"\n\"" + sep + "\n", // "": an empty V1, then "\n" quoted as white space
		} {
			if !strings.Contains(got, row) {
				t.Errorf("%s lacks %q:\n%s", name, row, got)
			}
		}
		if !strings.HasPrefix(got, "Seq"+sep) || strings.Count(got, "\n1"+sep+":") != 1 {
			t.Errorf("%s: want the header first and each row once:\n%s", name, got)
		}
	}
}
