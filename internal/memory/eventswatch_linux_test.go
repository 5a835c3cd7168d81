package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

func TestPressureEvents(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       int64
	}{
		{"quiet", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n", 0},
		{"at the limit", "low 0\nhigh 0\nmax 1284\noom 0\noom_kill 0\noom_group_kill 0\n", 1284},
		{"killed", "low 0\nhigh 3\nmax 1284\noom 2\noom_kill 2\noom_group_kill 1\n", 1289},
		{"oom_kill alone is not oom", "oom_kill 7\noom_group_kill 7\n", 0},
		{"no final newline", "max 5", 5},
		{"empty", "", 0},
		{"malformed", "max\nmax x\nmax -3\n\n oom 4 \nhigh 99999999999999999999\n", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pressureEvents([]byte(tc.text)); got != tc.want {
				t.Errorf("pressureEvents(%q) = %d, want %d", tc.text, got, tc.want)
			}
		})
	}
}

// TestWatchEvents: in a real cgroup v2 of 32 MiB, a job that touches 64
// MiB meets memory.max, and the watch wakes the guard; a cgroup that
// nothing charges wakes it never.
func TestWatchEvents(t *testing.T) {
	py := testutil.Python(t)
	dir, version := testutil.MemoryCgroup(t, 32<<20)
	if version != 2 {
		t.Skip("memory.events is cgroup v2's (the v2 lane runs this)")
	}
	wakes := make(chan struct{}, 1)
	w, err := watchEvents(filepath.Join(dir, "memory.events"), func() {
		select {
		case wakes <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	select {
	case <-wakes:
		t.Fatal("woken with no charge in the cgroup")
	case <-time.After(100 * time.Millisecond):
	}
	_, start := guardJob(t, py, dir, guardGrower)
	start()
	select {
	case <-wakes:
	case <-time.After(30 * time.Second):
		b, _ := os.ReadFile(filepath.Join(dir, "memory.events"))
		t.Fatalf("not woken in 30 s; memory.events:\n%s", b)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "memory.events"))
	if !strings.Contains(string(b), "max ") || pressureEvents(b) == 0 {
		t.Errorf("woken, but memory.events counts no pressure:\n%s", b)
	}
}

// TestWatchEventsNoFile: a path with no memory.events (cgroup v1) is an
// error, not a watch that never wakes.
func TestWatchEventsNoFile(t *testing.T) {
	if _, err := watchEvents(filepath.Join(t.TempDir(), "memory.events"), func() {}); err == nil {
		t.Error("no error for a missing file")
	}
}
