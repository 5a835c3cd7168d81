//go:build linux

package worker_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
	"go.uber.org/goleak"
)

// goWorker is the path of the built examples/goworker binary.
var goWorker string

func TestMain(m *testing.M) {
	// On cgroup v2 the tests' memory cgroups need this process moved into
	// a leaf of its own cgroup, which is only possible while it is alone
	// there: before any test has started a process that might outlive it.
	undo := testutil.DelegateCgroups()
	dir, err := os.MkdirTemp("", "ration-goworker")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	goWorker = filepath.Join(dir, "goworker")
	if p, ok := testutil.Prebuilt("goworker"); ok {
		goWorker = p
	} else {
		build := exec.Command(testutil.GoTool(), "build", "-o", goWorker, "./examples/goworker")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building examples/goworker:", err)
			undo()
			os.Exit(2)
		}
	}
	code := m.Run()
	undo()
	os.RemoveAll(dir)
	if code == 0 {
		if kids := children(nil); len(kids) > 0 {
			fmt.Fprintf(os.Stderr, "leftover child processes after the tests: %v\n", kids)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/ration-run/ration/internal/pdeath.loop")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// pyWorker is the command of the Python example worker.
func pyWorker(t testing.TB) []string {
	t.Helper()
	py := testutil.Python(t)
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

// recorder is a testutil.Recorder that also tracks the workers' pids.
type recorder struct {
	testutil.Recorder
	mu    sync.Mutex
	live  map[int]bool // pids of running workers
	pgids map[int]bool // every worker ever started
}

func newRecorder() *recorder { return &recorder{live: map[int]bool{}, pgids: map[int]bool{}} }

func (r *recorder) Observe(e event.Event) {
	r.Recorder.Observe(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Kind {
	case event.WorkerStarted:
		r.live[e.PID] = true
		r.pgids[e.PID] = true
	case event.WorkerBroken, event.WorkerRetired:
		delete(r.live, e.PID)
	}
}

func (r *recorder) count(k event.Kind) int { return r.Count(k) }

func (r *recorder) snapshot() []event.Event { return r.Events() }

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

// lockedBuffer is the shared buffer safe for concurrent use.
type lockedBuffer = testutil.Buffer

// moveTo returns an OnStart hook that moves each worker into cgroup dir.
func moveTo(dir string) func(pid int) error {
	return func(pid int) error {
		return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
	}
}

// waitFor polls cond until it holds or d passes (testutil.Eventually).
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, d, what, cond)
}
