//go:build linux

package runcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestResumeHintKeepsInputs: the command ration prints to run the rest of
// an interrupted run, pasted into bash, runs the same inputs byte for
// byte, whatever control characters or invalid UTF-8 they hold. The hint
// quoted a newline inside '...', and ration's one-line messages then wrote
// it as "; ", so the pasted command ran the input "a; b" instead of
// "a\nb".
func TestResumeHintKeepsInputs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to paste the hint into:", err)
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	dir := t.TempDir()
	if err := os.Symlink(buildRation(t), filepath.Join(dir, "ration")); err != nil {
		t.Fatal(err)
	}
	vals := []string{"a\nb", "tab\there", "cr\rx", "it's", `back\slash`, "bad\xff\xfe", "del\x7f", "\x1b[1m", "$HOME", ""}
	args := append([]string{"run", "-k", "-j", "1", "--joblog", "jl", "--", "printf", "[%s]\n", ":::"}, vals...)
	r := rcmd{dir: dir, stdout: full, args: args}.run(t)
	const mark = "to run the rest: "
	_, hint, ok := strings.Cut(r.stderr, mark)
	if r.code == 0 || !ok {
		t.Fatalf("exit %d, want an error and the --resume hint:\n%s", r.code, r.stderr)
	}
	hint, _, _ = strings.Cut(hint, "\n")
	cmd := exec.Command("bash", "-c", hint)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME=/nowhere")
	out, err := cmd.Output()
	var want strings.Builder
	for _, v := range vals {
		want.WriteString("[" + v + "]\n")
	}
	if err != nil || string(out) != want.String() {
		t.Errorf("the hint %q ran: %v\nstdout %q\nwant   %q", hint, err, out, want.String())
	}
}

// TestGNUTagStringEscapes: --tagstring decodes \t, \n, \r and octal
// escapes as GNU parallel's unquote_printf does (the expected output is
// GNU parallel 20221122's); ration printed them as written.
func TestGNUTagStringEscapes(t *testing.T) {
	t.Parallel()
	r := rcmd{dir: t.TempDir(), args: []string{"run", "-q", "-k", "--tagstring", `{}\t<\101\1\\n>`, "echo", "x", ":::", "a", "b"}}.run(t)
	if want := "a\t<A\x01\\\n>\tx a\nb\t<A\x01\\\n>\tx b\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout %q, want %q:\n%s", r.code, r.stdout, want, r.stderr)
	}
	r = rcmd{dir: t.TempDir(), args: []string{"run", "--tagstring", `\400`, "echo", ":::", "a"}}.run(t)
	if r.code != exitUsage || !strings.Contains(r.stderr, "--tagstring") {
		t.Errorf("--tagstring '\\400': exit %d, want 255 naming --tagstring:\n%s", r.code, r.stderr)
	}
}

// TestGNUMaxCharsAboveLimit: an -s above the longest command line GNU
// parallel allows (63664 here) is lowered to it with a warning, as GNU
// parallel does, so every input runs. ration filled a --shell script past
// Linux's limit of one argument, and its jobs failed with "argument list
// too long".
func TestGNUMaxCharsAboveLimit(t *testing.T) {
	t.Parallel()
	vals := inputs(30000)
	args := append([]string{"run", "-k", "-j", "1", "-X", "-s", "200000", "--shell", "echo", ":::"}, vals...)
	r := rcmd{dir: t.TempDir(), args: args}.run(t)
	if r.code != 0 || !strings.Contains(r.stderr, "--max-chars: 200000 is more than the longest command line allowed, 63664") {
		t.Fatalf("exit %d, want 0 and a warning:\n%.2000s", r.code, r.stderr)
	}
	if got := strings.Fields(r.stdout); !slices.Equal(got, vals) {
		t.Errorf("printed %d inputs, want the %d given, in order", len(got), len(vals))
	}
}

// TestGNUQuoteAsGNU: ration quotes a --shell command line's values as GNU
// parallel does (its Q), so --shellquote, --dry-run and the -s batches
// are GNU's: the wants are GNU parallel 20221122's. ration kept an empty
// pair of quotes at either end of a value that starts or ends with a
// quote, and left , : @ % = unquoted, so its lines differed and -X packed
// other arguments.
func TestGNUQuoteAsGNU(t *testing.T) {
	t.Parallel()
	vals := []string{"'x", "y'", "a,b", "k=v"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dry-run", "--shell", "echo"}, "echo \"'\"'x'\necho 'y'\"'\"\necho 'a,b'\necho 'k=v'\n"},
		{[]string{"--shellquote", "echo"}, `'echo "'"'"'"'"'"'x'"'"` + "\n" + `'echo '"'"'y'"'"'"'"'"'"'` + "\n" +
			`'echo '"'"'a,b'"'"` + "\n" + `'echo '"'"'k=v'"'"` + "\n"},
		{[]string{"--dry-run", "--shell", "-X", "-s", "20", "echo"}, "echo \"'\"'x' 'y'\"'\"\necho 'a,b' 'k=v'\n"},
	} {
		args := append(append([]string{"run", "-q", "-k", "-j", "1"}, c.args...), ":::")
		r := rcmd{dir: t.TempDir(), args: append(args, vals...)}.run(t)
		if r.code != 0 || r.stdout != c.want {
			t.Errorf("%q: exit %d, stdout\n%s\nwant\n%s\n%s", c.args, r.code, r.stdout, c.want, r.stderr)
		}
	}
}

// TestFilesResumeWithOutputInTree: with the joblog and --results inside
// the tree --files walks, a --resume of the same command skips what was
// done and runs nothing twice. The walk took the run's own output as
// inputs, which exist or not depending on how far the run got: the resume
// walked --results' files first, numbered a.txt and b.txt otherwise, so
// it skipped the result files as done and ran a.txt and b.txt again.
func TestFilesResumeWithOutputInTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "data", f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ran := filepath.Join(dir, "ran")
	args := []string{"run", "-j", "1", "--files", "data", "--joblog", "data/jl", "--results", "data/0res", "--", "sh", "-c", `echo "$1" >> "$0"; cat "$1"`, ran}
	r := rcmd{dir: dir, args: args}.run(t)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	r = rcmd{dir: dir, args: append([]string{"run", "--resume"}, args[1:]...)}.run(t)
	if r.code != 0 {
		t.Fatalf("--resume: exit %d:\n%s", r.code, r.stderr)
	}
	if got := lineCounts(t, ran); len(got) != 2 || got["data/a.txt"] != 1 || got["data/b.txt"] != 1 {
		t.Errorf("jobs run %v, want data/a.txt and data/b.txt once each:\n%s", got, r.stderr)
	}
}
