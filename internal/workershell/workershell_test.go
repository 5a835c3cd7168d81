package workershell

import (
	"errors"
	"os/exec"
	"testing"
)

// TestCheckProgram: the program a plain --worker line runs is looked up;
// lines the shell must interpret are left to it.
func TestCheckProgram(t *testing.T) {
	for _, c := range []struct {
		line    string
		missing bool
	}{
		{"nosuchcmd-reliab --flag", true},
		{"A=1 B=2 nosuchcmd-reliab", true},
		{"exec nosuchcmd-reliab", true},
		{"sh -c 'anything'", false},
		{"nosuchcmd-reliab $HOME/w.py", true}, // the first word is plain
		{"cd /tmp && nosuchcmd-reliab", false},
		{"'nosuchcmd-reliab'", false},
		{"$WORKER", false},
		{"", false},
	} {
		err := CheckProgram(c.line)
		if got := errors.Is(err, exec.ErrNotFound); got != c.missing {
			t.Errorf("%q: %v, want missing %v", c.line, err, c.missing)
		}
	}
}
