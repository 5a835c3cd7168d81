//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ration-run/ration/runner/joblog"
)

// failWriter fails every write, as a full disk does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// doubledPrefix returns the first pair of consecutive ": "-separated parts
// of msg that name the same thing twice ("ration report: report: ...",
// "--worker: worker: ...", "-a d: d: ...", "read input: read d: ..."),
// or "".
func doubledPrefix(msg string) string {
	word := func(s string, last bool) string {
		f := strings.Fields(s)
		if len(f) == 0 {
			return ""
		}
		w := f[0]
		if last {
			w = f[len(f)-1]
		}
		return strings.ToLower(strings.TrimLeft(w, "-"))
	}
	parts := strings.Split(msg, ": ")
	for i := 0; i+1 < len(parts); i++ {
		next := word(parts[i+1], false)
		if next != "" && (next == word(parts[i], false) || next == word(parts[i], true)) {
			return parts[i] + ": " + parts[i+1]
		}
	}
	return ""
}

// TestErrorsOneLineOnePrefix: every error of a subcommand is one line,
// starts with "ration COMMAND: " once, and names nothing twice in a row
// (it used to say "ration report: report: joblog: read DIR: is a
// directory", "ration run: input error: -a d: d: read input: read d: is a
// directory", "--worker: worker: exec", "--shard: shard 3/2", "--files:
// --files PATTERN", "--tmux is not supported: not supported", and "1
// malformed lines").
func TestErrorsOneLineOnePrefix(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.log")
	os.WriteFile(garbage, []byte("not a joblog\n"), 0o644)
	good := filepath.Join(dir, "good.log")
	os.WriteFile(good, []byte(joblog.Header+"\n1\t:\t1000.000\t1.000\t0\t0\t0\t0\tok\n"), 0o644)
	missing := filepath.Join(dir, "no", "such", "dir", "r.svg")
	for _, tt := range []struct {
		args   []string
		stdout func() any // nil: a buffer
		want   []string   // substrings of the message
		refuse []string   // substrings it must not have
	}{
		{args: []string{"report", dir}, want: []string{"ration report: " + dir + ": is a directory"}},
		{args: []string{"report", garbage}, want: []string{"1 malformed line,"}},
		{args: []string{"report", good, "-o", missing}, want: []string{"-o " + missing + ": no such file or directory"}, refuse: []string{".tmp"}},
		{args: []string{"report", good, "--format", "svg"}, stdout: func() any { return failWriter{} },
			want: []string{"ration report: stdout: no space left on device"}},
		{args: []string{"run", "-a", dir, "echo"}, want: []string{"-a " + dir + ": is a directory"}},
		{args: []string{"run", "echo", "::::", dir}, want: []string{":::: " + dir + ": is a directory"}},
		{args: []string{"run", "--shard", "3/2", "echo", ":::", "a"}, want: []string{"--shard: 3/2: want 0 <= I < N"}},
		{args: []string{"run", "--shard", "x", "echo", ":::", "a"}, want: []string{`--shard: "x" is not I/N`}},
		{args: []string{"run", "--worker", "no-such-program-ration-test", ":::", "a"}, want: []string{`--worker: exec: "no-such-program-ration-test"`}},
		{args: []string{"run", "--mem-per-job", "1Q", "echo", ":::", "a"}, want: []string{`--mem-per-job`, `"1Q"`}},
		{args: []string{"limits", "--mem-per-job", "1Q"}, want: []string{`--mem-per-job`, `"1Q"`}},
		{args: []string{"run", "--files", "no-such-file-*", "echo"}, want: []string{"--files no-such-file-*: no file matches"}},
		{args: []string{"run", "--tmux", "echo", ":::", "a"}, want: []string{"(GNU parallel's --tmux is not supported: "}},
		{args: []string{"run", "--tty", "echo", ":::", "a"}, want: []string{"(GNU parallel's --tty is not supported: jobs get /dev/null as stdin)"}},
		{args: []string{"run", "--rpl", "{x} s/a/b/", "echo", ":::", "a"}, refuse: []string{"not supported: replacement strings defined by perl expressions are not supported"}},
	} {
		var out, errb strings.Builder
		var stdout = any(&out)
		if tt.stdout != nil {
			stdout = tt.stdout()
		}
		code := dispatch(tt.args, strings.NewReader(""), stdout.(interface {
			Write([]byte) (int, error)
		}), &errb)
		msg := errb.String()
		prefix := "ration " + tt.args[0] + ": "
		if code != exitUsage || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, prefix) {
			t.Errorf("%q: exit %d, stderr %q; want 255 and one line starting %q", tt.args, code, msg, prefix)
			continue
		}
		if d := doubledPrefix(msg); d != "" {
			t.Errorf("%q: %q names a thing twice: %q", tt.args, msg, d)
		}
		if strings.Count(msg, `"1Q"`) > 1 || strings.Count(msg, "not supported") > 1 {
			t.Errorf("%q: %q says the same twice", tt.args, msg)
		}
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q: %q lacks %q", tt.args, msg, w)
			}
		}
		for _, r := range tt.refuse {
			if strings.Contains(msg, r) {
				t.Errorf("%q: %q has %q", tt.args, msg, r)
			}
		}
	}
}

// TestWorkerBreakNamesWorkerOnce: a worker's break is logged, and a task
// quarantined, with the worker named once ("worker 2 (pid N) exited ..."),
// not "worker: worker 2" or "breaking 2 workers: worker: worker 2".
func TestWorkerBreakNamesWorkerOnce(t *testing.T) {
	var out, errb strings.Builder
	code := dispatch([]string{"run", "--log-format", "text", "--worker", `sh -c "read task; exit 3"`, ":::", "a"}, strings.NewReader(""), &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "quarantined after breaking") {
		t.Fatalf("exit %d, want 1 and a quarantined task:\n%s", code, errb.String())
	}
	for _, line := range strings.Split(errb.String(), "\n") {
		_, e, ok := strings.Cut(line, ` err="`)
		if !ok {
			continue
		}
		e, _, _ = strings.Cut(e, `"`)
		if d := doubledPrefix(e); d != "" || strings.Contains(e, "workers: worker:") {
			t.Errorf("err %q names a thing twice: %q", e, d)
		}
	}
}
