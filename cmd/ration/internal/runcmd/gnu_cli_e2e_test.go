package runcmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGNUShellHintOnce: a command holding shell syntax that cannot exec
// without --shell says "did you mean --shell?" once, whatever the number
// of jobs: before any job starts, as the run's error.
func TestGNUShellHintOnce(t *testing.T) {
	_, stderr, code := rationCmd(t, "", nil, "run", "-j2", "echo {} | wc -l", ":::", "a", "b", "c", "d")
	if code != exitUsage || strings.Count(stderr, "did you mean --shell?") != 1 || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	_, stderr, _ = rationCmd(t, "", nil, "run", "no-such-program-x", ":::", "a")
	if strings.Contains(stderr, "--shell") {
		t.Errorf("a missing program without shell syntax got the hint:\n%s", stderr)
	}
}

// TestGNUExportedFunction: --shell runs the shell ration was started from
// (GNU parallel's rule), so a bash function exported with export -f runs
// as a job; PARALLEL_SHELL overrides it.
func TestGNUExportedFunction(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	// "; exit $?": bash -c would exec a last simple command, and ration's
	// parent would then be whatever started the test (make's sh).
	script := `f() { echo "f:$1"; }; export -f f; "$RATION" run --quiet --shell -k f ::: a b; exit $?`
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "RATION="+buildRation(t), "PARALLEL_SHELL=", "SHELL=/bin/sh")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "f:a\nf:b\n" {
		t.Errorf("%q %v", out, err)
	}
	stdout, _, _ := rationCmd(t, "", []string{"PARALLEL_SHELL=/bin/sh"}, "run", "--quiet", "--shell", "echo $0", ":::", "x")
	if stdout != "/bin/sh x\n" {
		t.Errorf("PARALLEL_SHELL: %q", stdout)
	}
}

// TestGNUInputsCLI: the GNU input model through the command line: sources
// combined, -a repeated combined with stdin, --header names, -N0, and the
// joblog of batches.
func TestGNUInputsCLI(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"-k", "echo", ":::", "A", "B", ":::", "C", "D"}, "A C\nA D\nB C\nB D\n"},
		{"x\ny\n", []string{"-k", "-a", "-", "-a", f, "echo"}, "x 1\nx 2\ny 1\ny 2\n"},
		{"", []string{"-k", "echo", "{2}", ":::", "a", "b", "::::+", f}, "1\n2\n"},
		{"", []string{"-k", "--header", ":", "echo", "{n}", ":::", "n", "1", "2"}, "1\n2\n"},
		// --header '' is a header, as in GNU parallel (its value is a
		// regular expression only with --pipe).
		{"", []string{"-k", "--header", "", "echo", "{n}", ":::", "n", "1", "2"}, "1\n2\n"},
		{"", []string{"-k", "-N0", "echo", "hi", ":::", "1", "2"}, "hi\nhi\n"},
		{"", []string{"-k", "-j1", "-n2", "echo", "{#}", "{}", ":::", "a", "b", "c"}, "1 a b\n2 c\n"},
		{"a\n\n \nb\n", []string{"-k", "-r", "echo", "[{}]"}, "[a]\n[b]\n"},
		{"", []string{"-k", "--tag", "echo", "x", ":::", "a"}, "a\tx a\n"},
		// --colsep '' splits every character, as GNU parallel's split //.
		{"", []string{"-k", "--colsep", "", "echo", "{1}-{2}-{3}", ":::", "abc", "xy", " a "}, "a-b-c\nx-y-\n-a-\n"},
		{"a b\n", []string{"-k", "-C", "", "--trim", "n", "echo", "[{2}]"}, "[ ]\n"},
	} {
		out, stderr, code := rationCmd(t, c.stdin, nil, append([]string{"run", "--quiet"}, c.args...)...)
		if code != 0 || out != c.want {
			t.Errorf("%q: exit %d, stdout %q, want %q; stderr %s", c.args, code, out, c.want, stderr)
		}
	}
	_, stderr, code := rationCmd(t, "", nil, "run", "echo", "{= $_ =}", ":::", "a")
	if code != exitUsage || !strings.Contains(stderr, "perl expressions") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("{= =}: exit %d, stderr %q", code, stderr)
	}
}

// TestGNUJoblogKilled: the joblog's Exitval and Signal of a job killed by
// an outside signal are "0 9", of one --timeout stopped "-1 15", as GNU
// parallel 20221122 writes them.
func TestGNUJoblogKilled(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sh", "-c", "kill -9 $$", ":::", "a"}, "0\t9"},
		{[]string{"--timeout", "0.2", "sleep", "{}", ":::", "5"}, "-1\t15"},
	} {
		jl := filepath.Join(dir, "jl")
		os.Remove(jl)
		rationCmd(t, "", nil, append([]string{"run", "--quiet", "--joblog", jl}, c.args...)...)
		b, err := os.ReadFile(jl)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		f := strings.Split(lines[len(lines)-1], "\t")
		if len(f) < 8 || f[6]+"\t"+f[7] != c.want {
			t.Errorf("%q: joblog line %q, want Exitval and Signal %q", c.args, lines[len(lines)-1], c.want)
		}
	}
}

// TestBareRun: a bare `ration run` reads command lines from stdin, as
// GNU parallel's `parallel < jobs` (docs/compat.md), and is refused with
// a one-line usage error only when stdin is a terminal, where it is a
// mistake far more often than commands typed by hand. It was refused
// whatever stdin was. The terminal is script(1)'s.
func TestBareRun(t *testing.T) {
	out, stderr, code := rationCmd(t, "echo a\necho b\n", nil, "run")
	if code != 0 || out != "a\nb\n" && out != "b\na\n" {
		t.Errorf("ration run < jobs: exit %d, stdout %q; stderr %s", code, out, stderr)
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is needed for a terminal on stdin")
	}
	// script -e exits with the command's status; its own stdin is
	// /dev/null, so nothing is typed into the terminal.
	cmd := exec.Command(script, "-qec", buildRation(t)+" run", "/dev/null")
	tty, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage ||
		!strings.Contains(string(tty), "ration run: "+errNoCommand) || strings.Count(strings.TrimSpace(string(tty)), "\n") != 0 {
		t.Errorf("ration run on a terminal: %v, output %q; want exit %d and one line %q", err, tty, exitUsage, errNoCommand)
	}
}
