//go:build unix

package progress

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// counts reads the jobs' counts of a line of ration's: "N failed", "N
// stopped", "N not started", and done as the bar ("D/T") or the
// summary ("S done, F failed": S+F) has it.
func counts(t *testing.T, line string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, m := range regexp.MustCompile(`(\d+) (failed|stopped|not started|done)`).FindAllStringSubmatch(line, -1) {
		n, _ := strconv.Atoi(m[1])
		got[m[2]] = n
	}
	if m := regexp.MustCompile(`\] (\d+)/\d+ `).FindStringSubmatch(line); m != nil {
		got["done"], _ = strconv.Atoi(m[1])
	} else {
		got["done"] += got["failed"]
	}
	return got
}

// TestRationBarAgreesWithSummary runs the ration binary with --bar to a
// pipe (the bar's last line is a log line there, the same counts as on
// a terminal) and ends the run three ways: interrupted by SIGINT, halted
// by --halt now, every job failed. The bar's last line and the summary
// give the same counts.
func TestRationBarAgreesWithSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ration binary")
	}
	bin, err := testutil.BuildRation(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ten := strings.Fields("1 2 3 4 5 6 7 8 9 10")
	for _, c := range []struct {
		name      string
		args      []string
		interrupt bool
	}{
		{"interrupted", []string{"-j", "4", "--term-timeout", "100ms", "--shell", "echo {} >> started; exec sleep 30"}, true},
		{"halted", []string{"-j", "2", "--halt", "now,fail=1", "--shell", "echo {} >> started; [ {} = 1 ] && exit 3; sleep 30"}, false},
		{"all failed", []string{"-j", "4", "false"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			args := append(append([]string{"run", "--bar", "--log-format", "text"}, c.args...), ":::")
			cmd := exec.CommandContext(ctx, bin, append(args, ten...)...)
			cmd.Dir = dir
			var errb testutil.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if c.interrupt {
				testutil.Eventually(t, 20*time.Second, "four jobs started", func() bool {
					b, _ := os.ReadFile(filepath.Join(dir, "started"))
					return strings.Count(string(b), "\n") >= 4
				})
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			_ = cmd.Wait()
			var bar, sum string
			for _, l := range strings.Split(errb.String(), "\n") {
				switch {
				case strings.HasPrefix(l, "ration: ["):
					bar = l
				case strings.HasPrefix(l, "ration: ") && strings.Contains(l, " done, "):
					sum = l
				}
			}
			if bar == "" || sum == "" {
				t.Fatalf("no bar or no summary:\n%s", errb.String())
			}
			b, s := counts(t, bar), counts(t, sum)
			for _, k := range []string{"done", "failed", "stopped", "not started"} {
				if b[k] != s[k] {
					t.Errorf("%s: the bar says %d, the summary %d\nbar:     %s\nsummary: %s", k, b[k], s[k], bar, sum)
				}
			}
			t.Logf("bar:     %s\nsummary: %s", bar, sum)
		})
	}
}
