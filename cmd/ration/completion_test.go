package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ration-run/ration/cmd/ration/internal/clitest"
)

// bashCompletion is where the bash-completion package, which cobra's
// bash scripts use, keeps its functions.
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// completionShell returns a directory with ration's completion script for
// shell in it (ration.SHELL) and ration itself, to be put first in PATH:
// the script completes the command named ration.
func completionShell(t *testing.T, shell string) (dir, script string) {
	t.Helper()
	bin := clitest.Ration(t, bins)
	out, err := exec.Command(bin, "completion", shell).Output()
	if err != nil {
		t.Fatalf("ration completion %s: %v", shell, err)
	}
	dir = t.TempDir()
	script = filepath.Join(dir, "ration."+shell)
	if err := os.WriteFile(script, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(dir, "ration")); err != nil {
		t.Fatal(err)
	}
	return dir, script
}

// TestCompletionBash loads `ration completion bash` in bash and completes
// as a user pressing TAB would: the commands after ration, the flags of a
// command, the shells after completion. The script asks the binary itself
// (ration __complete).
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash:", err)
	}
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Skip("no bash-completion package, which cobra's bash script needs:", err)
	}
	dir, file := completionShell(t, "bash")
	// complete returns what TAB offers after words (the last one being
	// completed), one word a line as bash's COMPREPLY holds them.
	complete := func(words ...string) []string {
		t.Helper()
		words = append([]string{"ration"}, words...)
		line := strings.Join(words, " ")
		prog := `source "$1" && source "$2" || exit 1
complete -p ration >/dev/null || { echo "no completion registered for ration" >&2; exit 1; }
shift 2
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="${*}"; COMP_POINT=${#COMP_LINE}
__start_ration
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, append([]string{"--norc", "--noprofile", "-c", prog, "bash", bashCompletion, file}, words...)...)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("completing %q: %v\n%s", line, err, errb.String())
		}
		var got []string
		for _, w := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			got = append(got, strings.TrimSpace(w))
		}
		return got
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{""}, []string{"run", "limits", "report", "sem", "completion"}},
		{[]string{"ru"}, []string{"run"}},
		{[]string{"run", "--jo"}, []string{"--jobs", "--joblog"}},
		{[]string{"run", "--max-r"}, []string{"--max-replace-args"}},
		{[]string{"limits", "--"}, []string{"--json", "--fs-root", "--jobs", "--mem-per-job"}},
		{[]string{"report", "--ti"}, []string{"--title"}},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}},
	} {
		got := complete(tc.words...)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("ration %s<TAB>: %q, want %s among them", strings.Join(tc.words, " "), got, w)
			}
		}
	}
	if got := complete("run", "--_pars"); slices.Contains(got, "--_parset") {
		t.Errorf("a hidden flag is completed: %q", got)
	}
}

// TestCompletionFish loads `ration completion fish` in fish and asks it
// what completes `ration run --jo`.
func TestCompletionFish(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("no fish:", err)
	}
	dir, file := completionShell(t, "fish")
	cmd := exec.Command(fish, "--no-config", "-c", `source $argv[1]; and complete -C"ration run --jo"; and complete -C"ration completion "`, file)
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fish: %v\n%s", err, out)
	}
	var words []string
	for _, l := range strings.Split(string(out), "\n") {
		w, _, _ := strings.Cut(l, "\t")
		words = append(words, w)
	}
	for _, want := range []string{"--jobs", "--joblog", "bash", "zsh", "fish"} {
		if !slices.Contains(words, want) {
			t.Errorf("fish completes %q, want %s among them", words, want)
		}
	}
}

// TestCompletionScripts: zsh and fish get their scripts; a missing or
// unknown shell is one usage line with exit status 255.
func TestCompletionScripts(t *testing.T) {
	call := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := dispatch(append([]string{"completion"}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	for shell, want := range map[string]string{"bash": "complete -o default -F __start_ration ration", "zsh": "#compdef ration", "fish": "complete -c ration"} {
		if code, out, errs := call(shell); code != 0 || !strings.Contains(out, want) || errs != "" {
			t.Errorf("completion %s: exit %d, stderr %q; output without %q", shell, code, errs, want)
		}
	}
	for _, args := range [][]string{nil, {"tcsh"}, {"bash", "zsh"}} {
		if code, out, errs := call(args...); code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "ration completion: ") {
			t.Errorf("completion %q: exit %d, stdout %q, stderr %q; want exit %d and one line", args, code, out, errs, exitUsage)
		}
	}
}
