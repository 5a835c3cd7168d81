package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
	"go.uber.org/goleak"
)

// goWorker is the path of the built examples/goworker binary.
var goWorker string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ration-goworker")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	goWorker = filepath.Join(dir, "goworker")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", goWorker, "./examples/goworker")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building examples/goworker:", err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if kids := children(nil); len(kids) > 0 {
			fmt.Fprintf(os.Stderr, "leftover child processes after the tests: %v\n", kids)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// pyWorker is the command of the Python example worker.
func pyWorker(t testing.TB) []string {
	t.Helper()
	// Resolve version-manager shims (pyenv's is a bash script that forks
	// helpers at every start) to the interpreter itself.
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("python3 not usable: %v", err)
	}
	py := strings.TrimSpace(string(exe))
	abs, err := filepath.Abs("examples/worker.py")
	if err != nil {
		t.Fatal(err)
	}
	return []string{py, abs}
}

// children lists the processes whose parent is this test process (when
// pgids is nil) or whose process group is one of pgids (the workers'
// groups, which also hold their children, re-parented when a worker dies).
func children(pgids map[int]bool) []string {
	self := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) < 3 || f[0] == "Z" {
			continue // a zombie is dead; init reaps re-parented ones
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		if (pgids == nil && ppid == self) || pgids[pgrp] {
			out = append(out, fmt.Sprintf("%d(%s)", pid, strings.TrimSpace(s[:i+1])))
		}
	}
	return out
}

// recorder is an event.Observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []event.Event
	live   map[int]bool // pids of running workers
	pgids  map[int]bool // every worker ever started
}

func newRecorder() *recorder { return &recorder{live: map[int]bool{}, pgids: map[int]bool{}} }

func (r *recorder) Observe(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	switch e.Kind {
	case event.WorkerStarted:
		r.live[e.PID] = true
		r.pgids[e.PID] = true
	case event.WorkerBroken, event.WorkerRetired:
		delete(r.live, e.PID)
	}
}

func (r *recorder) count(k event.Kind) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func (r *recorder) snapshot() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.events...)
}

func (r *recorder) livePIDs() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for pid := range r.live {
		out = append(out, pid)
	}
	return out
}

// newPool starts a pool and registers its Close and the leftover-process
// check as cleanups.
func newPool(t *testing.T, cfg worker.Config) (*worker.Pool, *recorder) {
	t.Helper()
	rec := newRecorder()
	cfg.Observer = event.Multi{rec, cfg.Observer}
	if cfg.Stderr == nil {
		cfg.Stderr = &lockedBuffer{}
	}
	p, err := worker.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		rec.mu.Lock()
		pg := maps.Clone(rec.pgids)
		rec.mu.Unlock()
		if kids := children(pg); len(kids) > 0 {
			t.Errorf("leftover processes after Close: %v", kids)
		}
	})
	return p, rec
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// childCgroup creates a child of this process's own cgroup in the v1
// hierarchy of controller ("memory" or "cpu") and removes it at cleanup,
// after killing whatever is still in it. It skips when not root or the
// hierarchy is not writable.
func childCgroup(t *testing.T, controller string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot create cgroups")
	}
	snap, err := cgroup.Reader{}.Read()
	if err != nil {
		t.Skipf("cannot read own cgroups: %v", err)
	}
	own, version := snap.MemoryDir, snap.MemoryVersion
	if controller == "cpu" {
		own, version = snap.CPUDir, snap.CPUVersion
	}
	if own == "" || version != 1 {
		t.Skipf("no v1 %s hierarchy (version %d, dir %q)", controller, version, own)
	}
	dir := filepath.Join(own, fmt.Sprintf("ration-worker-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
			t.Skipf("%s controller not writable: %v", controller, err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 100; i++ {
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			pids := strings.Fields(string(b))
			for _, s := range pids {
				if pid, err := strconv.Atoi(s); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if err := os.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Errorf("could not remove cgroup %s", dir)
	})
	return dir
}

func writeFile(t *testing.T, path, value string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		t.Fatalf("writing %q to %s: %v", value, path, err)
	}
}

// moveTo returns an OnStart hook that moves each worker into cgroup dir.
func moveTo(dir string) func(pid int) error {
	return func(pid int) error {
		return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
	}
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
