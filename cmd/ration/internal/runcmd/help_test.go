package runcmd

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// runHelp returns the flags part of `ration run --help`.
func runHelp(t *testing.T) string {
	t.Helper()
	var f runFlags
	var b bytes.Buffer
	if err := printRunHelp(&b, newRunFlagSet(&f)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRunHelpGroupsEveryFlag: `ration run --help` lists every flag once,
// in a group by purpose, its other names ("same as --X") on its line;
// every placeholder names what the flag takes (never a Go type such as
// `string`, nor pflag's `count[=true]`), no zero default is printed, and
// every line fits 80 columns.
func TestRunHelpGroupsEveryFlag(t *testing.T) {
	var f runFlags
	fs := newRunFlagSet(&f)
	listed := map[string]string{}
	for _, g := range helpGroups() {
		for _, name := range g.flags {
			if prev, ok := listed[name]; ok {
				t.Errorf("--%s is listed under %q and %q", name, prev, g.title)
			}
			listed[name] = g.title
			fl := fs.Lookup(name)
			switch {
			case fl == nil:
				t.Errorf("%q lists --%s, which ration run does not have", g.title, name)
			case aliasOf(fl) != "":
				t.Errorf("%q lists --%s, which is another name of --%s", g.title, name, aliasOf(fl))
			}
		}
	}
	fs.VisitAll(func(fl *pflag.Flag) {
		name := fl.Name
		if to := aliasOf(fl); to != "" {
			name = to
		}
		if _, ok := listed[name]; !ok && !fl.Hidden {
			t.Errorf("--%s is in no group of `ration run --help` (helpGroups)", fl.Name)
		}
	})
	help := runHelp(t)
	typeName := regexp.MustCompile(`(?m)^  (?:-\w, |    )--[\w-]+(?:, -?-[\w-]+)* (string|int|int64|uint|float64|float|bool|count|duration|stringArray|strings|ints|size)\b`)
	for _, m := range typeName.FindAllString(help, -1) {
		t.Errorf("placeholder is a Go type: %q", m)
	}
	for _, bad := range []string{"[=", "(default 0)", "(default \"", "(default false)"} {
		if strings.Contains(help, bad) {
			t.Errorf("help holds %q", bad)
		}
	}
	for _, l := range strings.Split(help, "\n") {
		if len(l) > helpWidth {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
}

// TestRunHelpFoldsAliases: GNU parallel's other names of a flag are on
// the flag's line, not entries of their own.
func TestRunHelpFoldsAliases(t *testing.T) {
	help := runHelp(t)
	for _, want := range []string{
		"-j, --jobs, -P, --max-procs N",
		"--link, --xapply",
		"--results, --res DIR",
		"--bar, --eta, --progress",
		"--block, --block-size SIZE",
		"--dry-run, --dryrun",
	} {
		if !strings.Contains(help, "  "+want+" ") && !strings.Contains(help, "  "+want+"\n") {
			t.Errorf("help has no line starting %q", want)
		}
	}
	if strings.Contains(help, "same as --") {
		t.Errorf("help still has an entry \"same as --\":\n%s", help)
	}
}

// TestRunShortHelp: `ration run -h` is the summary that reads in a
// minute, as ripgrep's -h: the usage and one line per flag (the GNU
// compatibility and --pipe groups as lists of names), every flag of every
// group named, every line within 79 columns so that no terminal of 80
// wraps it, at most 140 lines; it ends by pointing at --help.
func TestRunShortHelp(t *testing.T) {
	out, _, code := runCapture(t, "-h")
	if code != 0 {
		t.Fatalf("ration run -h: exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) > 140 {
		t.Errorf("ration run -h has %d lines, want at most 140:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 79 || strings.HasSuffix(l, " ") {
			t.Errorf("line of %d columns (or ending in a space): %q", n, l)
		}
	}
	for _, g := range helpGroups() {
		for _, name := range g.flags {
			if name != "help" && !regexp.MustCompile(`--`+regexp.QuoteMeta(name)+`\b`).MatchString(out) {
				t.Errorf("ration run -h does not name --%s", name)
			}
		}
	}
	if !strings.Contains(out, "ration run --help says what each flag does in full") {
		t.Errorf("ration run -h does not point at --help:\n%s", out)
	}
	full, _, _ := runCapture(t, "--help")
	if len(strings.Split(full, "\n")) <= len(lines) {
		t.Errorf("--help (%d lines) is not the longer text", len(strings.Split(full, "\n")))
	}
}

// runCapture runs `ration run` in-process with args and returns its
// stdout, stderr and exit status.
func runCapture(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runMain(args, func(string) string { return "" }, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// TestFirstClause: the gist of a flag's usage for `ration run -h`.
func TestFirstClause(t *testing.T) {
	for _, tt := range []struct {
		in    string
		width int
		want  string
	}{
		{"read inputs from FILE, one per line; repeated, the files are combined", 51, "read inputs from FILE, one per line"},
		{"--files: include hidden files and directories (names starting with '.')", 51, "include hidden files and directories"},
		{"with --resume or --resume-failed: resume a joblog written by another command instead", 40, "resume a joblog written by another…"},
		{"log FORMAT: auto (human on a terminal, else text), human, text or json", 51, "log FORMAT: auto, human, text or json"},
		{"stop early at WHEN,COND: now or soon", 51, "stop early at WHEN,COND"},
		{"stop a job (--timeout) with this SEQ of signals, e.g. TERM,200,KILL", 51, "stop a job with this SEQ of signals"},
		{"names its fields ({name}); REGEXP is GNU's", 51, "names its fields"},
		{"averyveryverylongwordwithoutanyspaceatallinit", 20, "averyveryverylongwo…"},
	} {
		if got := firstClause(tt.in, tt.width); got != tt.want {
			t.Errorf("firstClause(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}
