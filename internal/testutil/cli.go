package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binaries builds the Go commands a test binary runs as real processes,
// each package once however many tests ask for it, into one temporary
// directory. Make one in TestMain and Close it after m.Run. Safe for
// concurrent use.
type Binaries struct {
	dir   string
	mu    sync.Mutex
	built map[string]*build
}

type build struct {
	once sync.Once
	path string
	err  error
}

// NewBinaries returns a Binaries with a fresh temporary directory.
func NewBinaries() (*Binaries, error) {
	dir, err := os.MkdirTemp("", "ration-test-bin-")
	if err != nil {
		return nil, err
	}
	return &Binaries{dir: dir, built: map[string]*build{}}, nil
}

// Build returns the path of the command built from pkg (a package path or
// a directory relative to the test's working directory, as `go build`
// takes it), building it on the first call. A failed build fails t, and
// every later caller with the same error.
func (b *Binaries) Build(t testing.TB, pkg string) string {
	t.Helper()
	b.mu.Lock()
	bd, ok := b.built[pkg]
	if !ok {
		bd = &build{}
		b.built[pkg] = bd
	}
	base := filepath.Base(filepath.Clean(pkg))
	name := fmt.Sprintf("%s-%d", base, len(b.built))
	b.mu.Unlock()
	bd.once.Do(func() {
		if base == "." {
			wd, _ := os.Getwd()
			base = filepath.Base(wd)
			name = base
		}
		if p, ok := Prebuilt(base); ok {
			bd.path = p
			if _, err := os.Stat(p); err != nil {
				bd.err = fmt.Errorf("%s is set: %w", PrebuiltEnv, err)
			}
			return
		}
		bd.path = filepath.Join(b.dir, name)
		out, err := exec.Command(GoTool(), "build", "-o", bd.path, pkg).CombinedOutput()
		if err != nil {
			bd.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if bd.err != nil {
		t.Fatal(bd.err)
	}
	return bd.path
}

// Close removes the built commands.
func (b *Binaries) Close() error { return os.RemoveAll(b.dir) }

// ReadPID waits up to d for the file path to hold a whole line (a pid a
// job wrote with echo $$ > FILE) and returns the number on it; it fails t
// when none comes or the line is not a number.
func ReadPID(t testing.TB, path string, d time.Duration) int {
	t.Helper()
	var b []byte
	Eventually(t, d, "a pid in "+path, func() bool {
		b, _ = os.ReadFile(path)
		return bytes.HasSuffix(b, []byte("\n"))
	})
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %s: %q", path, b)
	}
	return pid
}

// WaitForText waits up to d until text() contains sub (the output of a
// process so far, in a Buffer), or fails t showing the text.
func WaitForText(t testing.TB, d time.Duration, text func() string, sub string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(text(), sub) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %q in:\n%s", d, sub, text())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
