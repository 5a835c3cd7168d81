//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// rationPipe runs the ration binary with args and stdin, and returns its
// stdout, stderr and exit status.
func rationPipe(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(buildRation(t), append([]string{"run", "--quiet"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestPipePartE2E: --pipepart gives each part of the file to a job, the
// header in front of each, and refuses what it cannot seek in.
func TestPipePartE2E(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("h\n1\n2\n3\n4\n5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := rationPipe(t, "", "-k", "--pipepart", "-a", file, "--header", ":", "--block", "3", "--shell", "tr '\\n' ' '; echo")
	if want := "h 1 2 \nh 3 4 \nh 5 \n"; out != want || code != 0 {
		t.Errorf("got %q, exit %d (%s), want %q", out, code, errs, want)
	}
	_, errs, code = rationPipe(t, "", "--pipepart", "-a", "/dev/null", "wc")
	if code == 0 || !strings.Contains(errs, "--pipepart: /dev/null: not a regular file") {
		t.Errorf("a device: exit %d, %s", code, errs)
	}
	_, errs, code = rationPipe(t, "", "--pipepart", "-a", filepath.Join(dir, "none"), "wc")
	if code == 0 || !strings.Contains(errs, "--pipepart: ") || !strings.Contains(errs, "none") {
		t.Errorf("no file: exit %d, %s", code, errs)
	}
}
