//go:build unix

package gnurun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
)

// TestGNUWorkdir: with GNUExec.Workdir (--workdir), every job runs in the
// directory, made with its parents when missing, one per job with
// replacement strings, relative to ration's directory; a relative program
// path is found there, as a shell that changed into it would find it; a
// directory that cannot be made fails its job, which does not run.
func TestGNUWorkdir(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	if err := os.MkdirAll("tools", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("tools", "where"), []byte("#!/bin/sh\necho \"$1 $(pwd)\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("file", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		workdir string
		command []string
		want    string
		failed  int64
	}{
		{"out/a/b", []string{"sh", "-c", `echo "$0 $(pwd)"`}, "x $W/out/a/b\ny $W/out/a/b\n", 0},
		{"one/{}", []string{"sh", "-c", `echo "$0 $(pwd)"`}, "x $W/one/x\ny $W/one/y\n", 0},
		{base + "/tools", []string{"./where"}, "x $W/tools\ny $W/tools\n", 0},
		{"file/{}", []string{"sh", "-c", `echo ran`}, "ration: --workdir file/x: mkdir " + base + "/file: not a directory\n" +
			"ration: --workdir file/y: mkdir " + base + "/file: not a directory\n", 2},
	} {
		sum, out, _, err := run(t, with(runner.Config{Command: c.command, Input: input.Args([]string{"x", "y"}), Jobs: 1, KeepOrder: true}, GNU{Exec: GNUExec{Workdir: c.workdir}}))
		out = strings.ReplaceAll(out, base, "$W")
		want := strings.ReplaceAll(c.want, base, "$W")
		if err != nil || out != want || sum.Failed != c.failed {
			t.Errorf("Workdir %q: %d failed, %v, output:\n%s\nwant %d failed, output:\n%s", c.workdir, sum.Failed, err, out, c.failed, want)
		}
	}
}
