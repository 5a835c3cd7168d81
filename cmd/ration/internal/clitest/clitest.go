// Package clitest holds what the tests of ration's commands share: the
// TestMain of each of cmd/ration's packages, which builds the ration
// binary and the example Go worker once per test binary for the
// end-to-end tests and checks for leaked goroutines.
//
// Only tests import it; of this module it imports cgroup and
// internal/testutil.
package clitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/testutil"
)

// Main runs m as a package's TestMain, with *bins set to the Binaries its
// tests build with, and exits. First of all, before any test starts a
// process, it makes the one change to the test process's own cgroup that
// the real-cgroup tests need on cgroup v2 (see testutil.DelegateCgroups):
// later, with parallel tests' processes beside the test process, that
// change is no longer possible. After the tests it removes what was
// built and checks for leaked goroutines.
func Main(m *testing.M, bins **testutil.Binaries) {
	undo := testutil.DelegateCgroups()
	b, err := testutil.NewBinaries()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		undo()
		os.Exit(1)
	}
	*bins = b
	code := m.Run()
	b.Close()
	undo()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/ration-run/ration/internal/pdeath.loop")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Root is the module's root directory, for the files of the repository
// that tests read (docs/, cgroup/testdata/).
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("clitest: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
}

// Ration returns the ration binary, built from cmd/ration on first use.
func Ration(t testing.TB, bins *testutil.Binaries) string {
	t.Helper()
	return bins.Build(t, filepath.Join(Root(), "cmd", "ration"))
}

// GoWorker returns runner/worker/examples/goworker, built on first use.
func GoWorker(t testing.TB, bins *testutil.Binaries) string {
	t.Helper()
	return bins.Build(t, filepath.Join(Root(), "runner", "worker", "examples", "goworker"))
}

// WriteFile writes data to name, failing t when it cannot.
func WriteFile(t testing.TB, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
}

// OwnCgroup is the test process's own cgroup; it skips t unless root
// runs it and the cgroups can be read.
func OwnCgroup(t testing.TB) cgroup.Snapshot {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("real-cgroup test needs root")
	}
	s, err := cgroup.Reader{}.Read()
	if err != nil {
		t.Skipf("no cgroups: %v", err)
	}
	return s
}

// rationCmd runs the ration binary with args and stdin, and returns its
// stdout, stderr and exit status.
func RationCmd(t testing.TB, bins *testutil.Binaries, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(Ration(t, bins), args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
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

// LimitsIn runs `ration limits --json ARGS` as a process that first moves
// itself into the cgroup dir (v1 or v2: both have cgroup.procs), so that
// only the process under test is ever placed there.
func LimitsIn(t testing.TB, bin, dir string, args ...string) map[string]any {
	t.Helper()
	script := `echo $$ > "$1/cgroup.procs" && shift && exec "$@"`
	argv := append([]string{"-c", script, "sh", dir, bin, "limits", "--json"}, args...)
	cmd := exec.Command("/bin/sh", argv...)
	cmd.Env = append(os.Environ(), "RATION_JOBS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ration limits in %s: %v\n%s", dir, err, stderr.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	return m
}

// JobsFlagErr is the error of a -j value that is neither a number nor a
// file: -j also takes a FILE holding the value, and says so.
func JobsFlagErr(spec string) string {
	return fmt.Sprintf("%q is not a whole number >= 1, +N, -N, a percentage like 50%% or an existing file holding one", spec)
}

// JobsErr is the exact message of limits.CheckJobs for a -j value that is
// not a whole number (the CLI puts the flag or variable name before it).
func JobsErr(spec string) string {
	return fmt.Sprintf("%q is not a whole number >= 1, +N, -N or a percentage like 50%%", spec)
}
