//go:build linux

package runcmd

import (
	"strings"
	"testing"
	"time"
)

// TestCommandCheckTerminalStdin: with the inputs to be typed on the
// terminal, a program that cannot be found is the one line, at once: not
// the hint to type the inputs first, and not a failure per typed line.
func TestCommandCheckTerminalStdin(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	cmd, out, errb := rcmd{dir: t.TempDir(), stdin: slave, args: []string{"run", "nosuchcmd"}}.start(t)
	slave.Close()
	r := waitRation(t, cmd, out, errb, 20*time.Second)
	if r.code != exitUsage || r.stderr != "ration run: cannot run \"nosuchcmd\": executable file not found in $PATH\n" {
		t.Errorf("exit %d, stderr %q; want 255 and the one line", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "Ctrl-D") {
		t.Error("asked for the inputs")
	}
}
