//go:build unix

package runcmd

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestKeepOrderLineBuffer: -k --line-buffer (GNU parallel accepts it;
// ration refused it) keeps the input order and prints the lines of the
// job that is first in that order as they come: job a's first line is
// printed while a still runs (it waits for the test to see that line), and
// job b, which ended long before, is printed only after a's last line.
// Held jobs print stdout then stderr, as with -k; the outputs are GNU
// parallel 20221122's.
func TestKeepOrderLineBuffer(t *testing.T) {
	dir := t.TempDir()
	goFile := filepath.Join(dir, "go")
	script := `case {} in a) echo a-ready; while [ ! -e ` + goFile + ` ]; do sleep 0.01; done; echo a-end;; *) echo {};; esac`
	cmd := exec.Command(buildRation(t), "run", "--quiet", "-k", "--lb", "-j3", "--shell", script, ":::", "a", "b", "c")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	// A hang guard only: if a-ready is held, a is let end after 20 s.
	guard := time.After(20 * time.Second)
read:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break read
			}
			got = append(got, l)
			if l == "a-ready" {
				if err := os.WriteFile(goFile, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		case <-guard:
			t.Errorf("a-ready not printed while job a ran (lines so far %q)", got)
			if err := os.WriteFile(goFile, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	if want := []string{"a-ready", "a-end", "b", "c"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("lines %q, want %q (%v): %s", got, want, err, stderr.String())
	}

	// Several jobs, stdout and stderr, unfinished lines: GNU's output.
	cmdline := `printf "s{}"; echo e{} >&2; sleep 0.{}; echo end {}; echo x{} >&2`
	out, errs, code := rationCmd(t, "", nil, "run", "--quiet", "-k", "--lb", "-j3", "--shell", cmdline, ":::", "3", "1", "2")
	if want := "s3end 3\ns1end 1\ns2end 2\n"; code != 0 || out != want {
		t.Errorf("stdout %q, want %q (exit %d, %s)", out, want, code, errs)
	}
	if want := "e3\nx3\ne1\nx1\ne2\nx2\n"; errs != want {
		t.Errorf("stderr %q, want %q", errs, want)
	}
	out, _, code = rationCmd(t, "", nil, "run", "--quiet", "-k", "--lb", "--tag", "-j3", "--shell", `printf "s{}"; sleep 0.{}; echo end {}`, ":::", "3", "1", "2")
	if want := "3\ts3end 3\n1\ts1end 1\n2\ts2end 2\n"; code != 0 || out != want {
		t.Errorf("--tag: stdout %q, want %q (exit %d)", out, want, code)
	}
}
