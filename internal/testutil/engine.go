package testutil

import (
	"os"
	"os/exec"
	"strings"
	"sync"
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

// WatchBuffer is a Buffer that tells when what was written first contains
// a string: a job's "ready" line, say, as an explicit signal instead of a
// polling loop.
type WatchBuffer struct {
	Buffer
	want string
	once sync.Once
	seen chan struct{}
}

// NewWatchBuffer returns a WatchBuffer that watches for want.
func NewWatchBuffer(want string) *WatchBuffer {
	return &WatchBuffer{want: want, seen: make(chan struct{})}
}

// Write appends p and signals Seen once the contents hold the string.
func (w *WatchBuffer) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if strings.Contains(w.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

// Seen is closed once the contents hold the string.
func (w *WatchBuffer) Seen() <-chan struct{} { return w.seen }
