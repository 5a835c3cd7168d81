package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestHelpCommand: `ration help COMMAND` prints what `ration COMMAND
// --help` prints, for every command; `ration help` the top-level usage.
func TestHelpCommand(t *testing.T) {
	call := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := dispatch(args, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	for _, c := range commands() {
		code, got, _ := call("help", c.name)
		wantCode, want, _ := call(c.name, "--help")
		if code != 0 || wantCode != 0 || got != want || got == "" {
			t.Errorf("help %s: exit %d, %d bytes; want exit 0 and the %d bytes of %s --help", c.name, code, len(got), len(want), c.name)
		}
	}
	code, got, _ := call("help")
	_, want, _ := call("--help")
	if code != 0 || got != want || !strings.Contains(got, "ration help COMMAND") {
		t.Errorf("help: exit %d, output %q", code, got)
	}
	if code, _, errs := call("help", "nosuch"); code != exitUsage || errs != "ration help: unknown command \"nosuch\" (try 'ration help')\n" {
		t.Errorf("help nosuch: exit %d, stderr %q", code, errs)
	}
}

// TestRunHelpShell: `ration run --help` names the shell --shell uses as
// README.md and docs/compat.md do (GNU parallel's choice, so that
// `export -f` functions work), not `sh -c`, which it is not: a user who
// reads "sh -c" writes for sh and gets bash, or the other way round.
func TestRunHelpShell(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch([]string{"run", "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("run --help: exit %d: %s", code, errb.String())
	}
	line := helpEntry(out.String(), "--shell ")
	for _, want := range []string{"$PARALLEL_SHELL", "the shell ration was started from", "$SHELL"} {
		if !strings.Contains(line, want) {
			t.Errorf("--shell's help %q does not name %s", line, want)
		}
	}
	if strings.Contains(line, "through sh -c,") {
		t.Errorf("--shell's help %q says sh -c", line)
	}
}

// TestRunHelpJobsFile: `ration run --help` says -j takes a FILE, as
// `ration limits --help`, README and docs/compat.md do; it did not.
func TestRunHelpJobsFile(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch([]string{"run", "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("run --help: exit %d: %s", code, errb.String())
	}
	if l := helpEntry(out.String(), "-j, "); !strings.Contains(l, "--jobs") || !strings.Contains(l, "FILE") {
		t.Errorf("-j's help %q does not name FILE", l)
	}
}

// helpEntry returns the entry of help whose first line starts with
// prefix (after its indent), its lines joined by a space: what a flag
// does is wrapped onto lines indented past the flags' names.
func helpEntry(help, prefix string) string {
	var entry []string
	for _, l := range strings.Split(help, "\n") {
		switch {
		case entry == nil && strings.HasPrefix(l, "  ") && strings.HasPrefix(strings.TrimSpace(l), prefix):
			entry = append(entry, strings.TrimSpace(l))
		case entry != nil && strings.HasPrefix(l, "        ") && strings.TrimSpace(l) != "":
			entry = append(entry, strings.TrimSpace(l))
		case entry != nil:
			return strings.Join(entry, " ")
		}
	}
	return strings.Join(entry, " ")
}

// TestHelpPlaceholders: no command's help names a flag's value by its Go
// type (`--title string`, `--retries int`) or with pflag's
// `count[=true]`: a placeholder says what the flag takes.
func TestHelpPlaceholders(t *testing.T) {
	typeName := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--[\w-]+(?:, -?-[\w-]+)* (string|int|int64|uint|float64|float|bool|count|duration|stringArray|strings|ints)\b`)
	for _, c := range commands() {
		var out, errb bytes.Buffer
		if code := dispatch([]string{c.name, "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%s --help: exit %d: %s", c.name, code, errb.String())
		}
		for _, m := range typeName.FindAllString(out.String(), -1) {
			t.Errorf("%s --help: the placeholder is a Go type: %q", c.name, strings.TrimSpace(m))
		}
		if strings.Contains(out.String(), "[=") {
			t.Errorf("%s --help holds pflag's [=...]:\n%s", c.name, out.String())
		}
	}
}
