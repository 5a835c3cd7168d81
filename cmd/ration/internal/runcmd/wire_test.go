package runcmd

import (
	"strings"
	"testing"

	"github.com/ration-run/ration/internal/testutil"
)

// TestWireDryRun builds and runs whole runs in-process, in both modes,
// with --dry-run (no process starts): the wiring's order holds together
// without a subprocess, and --worker starts no worker for a dry run.
func TestWireDryRun(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dry-run", "-k", "-j", "2", "echo", "{}", ":::", "a b", "c"}, "echo 'a b'\necho c\n"},
		{[]string{"--dry-run", "-k", "--worker", "no-such-worker-command", ":::", "a"}, `{"id":1,"input":"a"}` + "\n"},
		{[]string{"--dry-run", "--log-format", "json", "--quiet", "--shard", "0/1", "echo"}, "echo x\n"},
	} {
		var out, errb testutil.Buffer
		code := runMain(c.args, func(string) string { return "" }, strings.NewReader("x\n"), &out, &errb)
		if code != 0 || out.String() != c.want {
			t.Errorf("%q: exit %d, stdout %q, want 0 and %q\nstderr:\n%s", c.args, code, out.String(), c.want, errb.String())
		}
	}
}

// TestRunnerRefUnset: before wire sets the runner, the watchdog sees no
// rows (it cannot look then: it starts after the runner is set).
func TestRunnerRefUnset(t *testing.T) {
	var ref runnerRef
	if rows := ref.Rows(); rows != nil {
		t.Errorf("rows %v before the runner is set", rows)
	}
}
