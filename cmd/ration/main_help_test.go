package main

import (
	"bytes"
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
