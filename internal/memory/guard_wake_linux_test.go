package memory

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// countHandler keeps the readings of the guard's end-of-run debug line.
type countHandler struct {
	slog.Handler
	readings chan int64
}

func (countHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h countHandler) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "readings" {
			h.readings <- a.Value.Int64()
		}
		return true
	})
	return nil
}

// TestGuardWakesOneThread: between two of its readings the guard's
// goroutine sleeps so that only its own thread wakes up for the next one.
// A Go timer or a sleeping system call would also wake the runtime's
// monitor thread (sysmon) and a spinning scheduler thread each time: four
// to six context switches a reading, which on a virtual machine cost 80 to
// 160 us each reading and, held next to the limit (a reading every 2 to
// 5 ms), 2% of a CPU. The process's voluntary context switches, all
// threads together (getrusage), count the wake-ups.
func TestGuardWakesOneThread(t *testing.T) {
	dir := t.TempDir()
	const limit = 200 << 20
	used := limit - GuardMargin(limit) - 1<<20 // next to the line: a reading every guardMinInterval
	for name, v := range map[string]int64{"memory.max": limit, "memory.current": used} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strconv.FormatInt(v, 10)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := countHandler{slog.DiscardHandler, make(chan int64, 1)}
	g := &Guard{dir: dir, version: 2, leaf: dir, proc: "/proc", self: os.Getpid(), log: slog.New(h)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	before := switches(t)
	go func() { done <- g.Run(ctx) }()
	time.Sleep(600 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n := switches(t) - before
	readings := <-h.readings
	if readings < 50 {
		t.Fatalf("%d readings in 0.6 s; want a reading every %v", readings, guardMinInterval)
	}
	per := float64(n) / float64(readings)
	t.Logf("%d readings, %d voluntary context switches: %.2f a reading", readings, n, per)
	if per > 2 {
		t.Errorf("%.2f voluntary context switches a reading; want at most 2 (the guard's thread, once)", per)
	}
}

// switches returns the voluntary context switches of every thread of the
// process so far.
func switches(t *testing.T) int64 {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Nvcsw
}
