package runcmd

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestGNUXManyNames: -X over 100,000 file names makes as many command lines
// as GNU parallel (within one) with the same arguments, each once: the
// lines are filled to GNU parallel's default -s and the last ones spread
// over the job slots as GNU parallel does.
func TestGNUXManyNames(t *testing.T) {
	if _, err := exec.LookPath("parallel"); err != nil {
		t.Skip("GNU parallel is not installed (.ci/run installs it)")
	}
	var in strings.Builder
	for i := 1; i <= 100_000; i++ {
		fmt.Fprintf(&in, "dir/file-%06d.txt\n", i)
	}
	run := func(name string, args ...string) []string {
		cmd := exec.Command(name, args...)
		cmd.Stdin = strings.NewReader(in.String())
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v: %s", name, err, errb.String())
		}
		return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	}
	gnu := run("parallel", "--will-cite", "-j2", "-X", "--dry-run", "echo", "pre-{}")
	got := run(buildRation(t), "run", "--quiet", "-j2", "-X", "--dry-run", "echo", "pre-{}")
	if d := len(got) - len(gnu); d < -1 || d > 1 {
		t.Errorf("ration made %d command lines, GNU parallel %d", len(got), len(gnu))
	}
	words := func(lines []string) []string {
		var w []string
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) == 0 || f[0] != "echo" {
				t.Fatalf("not an echo line: %q", l)
			}
			w = append(w, f[1:]...)
		}
		slices.Sort(w)
		return w
	}
	gw, rw := words(gnu), words(got)
	if len(rw) != 100_000 || !slices.Equal(gw, rw) {
		t.Errorf("ration's arguments (%d) differ from GNU parallel's (%d)", len(rw), len(gw))
	}
	t.Logf("%d command lines (GNU parallel: %d)", len(got), len(gnu))
}
