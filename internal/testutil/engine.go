package testutil

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Python returns the path of the python3 interpreter itself, resolving
// version-manager shims (pyenv's is a bash script that forks helpers at
// every start), or skips the test when there is none.
func Python(t testing.TB) string {
	t.Helper()
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("python3 not usable: %v", err)
	}
	return strings.TrimSpace(string(exe))
}

// WriteFile writes value to the file path (a cgroup control file, say),
// failing the test when it cannot.
func WriteFile(t testing.TB, path, value string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		t.Fatalf("writing %q to %s: %v", value, path, err)
	}
}
