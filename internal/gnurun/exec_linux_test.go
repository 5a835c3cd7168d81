package gnurun

import (
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
)

// niceOf is the niceness in a /proc/PID/stat line (its 19th field; the
// 2nd, the command's name in parentheses, may hold spaces).
func niceOf(t *testing.T, stat string) int {
	t.Helper()
	_, rest, ok := strings.Cut(strings.TrimSpace(stat), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 17 {
		t.Fatalf("not a /proc/PID/stat line: %q", stat)
	}
	n, err := strconv.Atoi(f[16])
	if err != nil {
		t.Fatalf("%q: %v", stat, err)
	}
	return n
}

// TestNice runs jobs at niceness 7 (each reads its own niceness from
// /proc/self/stat), then jobs without --nice, which must run at ration's
// own niceness: the niced forking thread changed nobody else.
func TestNice(t *testing.T) {
	own, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	own = 20 - own // the raw syscall returns 20 - nice
	want := own + 7
	if want > 19 {
		want = 19
	}
	_, out, _, err := run(t, with(runner.Config{Command: []string{"sh", "-c", "exec cat /proc/self/stat", "{}"}, Input: input.Args(nums(4))}, GNU{Exec: GNUExec{Nice: want, NiceSet: true}}))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("output %q", out)
	}
	for _, l := range lines {
		if got := niceOf(t, l); got != want {
			t.Errorf("a job ran at niceness %d; want %d (--nice)", got, want)
		}
	}
	_, out, _, err = run(t, runner.Config{Command: []string{"sh", "-c", "exec cat /proc/self/stat", "{}"}, Input: input.Args(nums(2))})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if got := niceOf(t, l); got != own {
			t.Errorf("a job without --nice ran at niceness %d; want ration's %d", got, own)
		}
	}
}
