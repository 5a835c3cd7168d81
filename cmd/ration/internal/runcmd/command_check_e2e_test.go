//go:build linux

package runcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandCheckE2E: a program that cannot be found is one line before
// any job starts, and exit 255, however it happens (not in $PATH, no such
// file, not executable, a directory, a quoted shell command line) and
// whatever the inputs (stdin, :::, none), the bar or -q. A program named
// by the input can only be looked up as its job starts: that job fails.
func TestCommandCheckE2E(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("echo x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(dir, "ran")
	seq50 := strings.Repeat("x\n", 50)
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"stdin, 50 inputs", seq50, []string{"nosuchcmd"}, `cannot run "nosuchcmd": executable file not found in $PATH`},
		{"inputs after :::", "", []string{"nosuchcmd", ":::", "a", "b"}, `cannot run "nosuchcmd"`},
		{"no input", "", []string{"nosuchcmd"}, `cannot run "nosuchcmd"`},
		{"-j 1 --bar", seq50, []string{"-j", "1", "--bar", "nosuchcmd"}, `cannot run "nosuchcmd"`},
		{"-q", seq50, []string{"-q", "nosuchcmd"}, `cannot run "nosuchcmd"`},
		{"JSON logs", seq50, []string{"--log-format", "json", "nosuchcmd"}, `cannot run "nosuchcmd"`},
		{"no such file", seq50, []string{filepath.Join(dir, "none")}, "no such file or directory"},
		{"not executable", seq50, []string{plain}, "permission denied"},
		{"a directory", seq50, []string{dir}, `cannot run "` + dir + `"`},
		{"a quoted pipeline", "", []string{"echo {} | tr a-z A-Z", ":::", "abc"}, "is a shell command line, not a program, and runs without a shell: did you mean --shell?"},
		{"shell syntax too", "", []string{"nosuchcmd", "{}", ">", ran, ":::", "abc"}, "did you mean --shell?"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rcmd{dir: dir, stdin: strings.NewReader(c.stdin), args: append([]string{"run"}, c.args...)}.run(t)
			if r.code != exitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) ||
				!strings.HasPrefix(r.stderr, "ration run: ") {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 255 and one line holding %q", r.code, r.stdout, r.stderr, c.want)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("a job ran")
			}
		})
	}
	t.Run("program from the input", func(t *testing.T) {
		r := rcmd{dir: dir, args: []string{"run", "-j", "1", "{}", ":::", "nosuchcmd", "true"}}.run(t)
		if r.code != 1 || strings.Count(r.stderr, "executable file not found") != 1 {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1: the job of nosuchcmd failed, true ran", r.code, r.stderr)
		}
	})
}

// TestShellHintE2E: shell syntax in a command that runs without a shell
// is said once, before any job starts, and the jobs run as written
// (echo prints the ">"); --shell, -q and a dry run have no hint.
func TestShellHintE2E(t *testing.T) {
	dir := t.TempDir()
	const hint = "ration run: warning: the command holds shell syntax (>) but runs without a shell: did you mean --shell?\n"
	r := rcmd{dir: dir, args: []string{"run", "-j", "1", "echo", "{}", ">", "out_{}.txt", ":::", "abc", "def"}}.run(t)
	if r.code != 0 || r.stdout != "abc > out_abc.txt\ndef > out_def.txt\n" || !strings.HasPrefix(r.stderr, hint) || strings.Count(r.stderr, "did you mean") != 1 {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 0, the echoed lines and the hint first, once", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"--shell", "echo", "{}", ">", "out_{}.txt"},
		{"-q", "echo", "{}", ">", "out_{}.txt"},
		{"--dry-run", "echo", "{}", ">", "out_{}.txt"},
		{"echo", "{print $1}", "a|b", "<title>", "s/a$/b/"},
	} {
		r := rcmd{dir: dir, args: append(append([]string{"run"}, args...), ":::", "abc")}.run(t)
		if r.code != 0 || strings.Contains(r.stderr, "did you mean") {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant exit 0 and no hint", args, r.code, r.stderr)
		}
	}
}
