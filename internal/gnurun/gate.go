package gnurun

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/internal/runhook"
)

// StartGate are GNU parallel's --load, --noswap and --memfree: states of
// the machine a job's start waits for, checked before each attempt starts
// (after the pool has room, before the memory admission). A job that finds
// the gate closed waits, asking again as jobs end and every 100 ms; the
// machine is read at most once a second (--noswap: over one-second
// windows, as GNU's vmstat 1 2), and again 100 ms after a job started. So
// that a run cannot wait for ever on a machine busy with others' work, a
// job starts whatever the gate says when no other job of the run is
// running. The zero value checks nothing. Linux only (GateSupported):
// elsewhere runner.New refuses a gate that checks anything.
type StartGate struct {
	// MaxLoad, when > 0, lets a job start only while fewer than MaxLoad
	// threads of the machine are running or waiting for I/O (R or D state,
	// kernel threads left out, ration's reading thread too), as GNU
	// parallel counts its "load" from ps: the load of this instant, not
	// an average, so that at most one job starts over the limit.
	MaxLoad float64
	// NoSwap lets a job start only while the machine is not swapping: not
	// both pages swapped in and pages swapped out during the last second
	// (/proc/vmstat's pswpin and pswpout), as GNU parallel's si*so. Unknown
	// (the first second) counts as swapping.
	NoSwap bool
	// MemFree, when > 0, lets a job start only while more than MemFree
	// bytes are free: MemAvailable of /proc/meminfo, and, with Memory, at
	// most the headroom of ration's memory cgroup (its limit minus its
	// working set). Below half of it, the youngest running job is stopped
	// and queued again (memFreeWatch, ErrMemFree).
	MemFree int64
	// Memory reads ration's memory cgroup for MemFree (nil: none).
	Memory *memory.Sampler
}

// active reports whether g checks anything.
func (g *StartGate) active() bool { return g.MaxLoad > 0 || g.NoSwap || g.MemFree > 0 }

// gateState is the gate's latest readings.
type gateState struct {
	mu      sync.Mutex
	at      time.Time // when open was decided
	open    bool
	started time.Time // the latest start the gate allowed
	// The swap counters at the start of the current window.
	swapAt      time.Time
	swapIn      int64
	swapOut     int64
	swapping    bool
	swapVerdict bool // a whole window was measured
	// procDir is the proc file system ("": /proc); readMachine reads it
	// (nil: readMachine), for tests of the decisions.
	procDir     string
	readMachine func(dir string, load bool) (machine, error)
}

// machine is what the gate reads of the machine.
type machine struct {
	load             int   // threads running or in D state, kernel threads left out
	swapIn, swapOut  int64 // /proc/vmstat pswpin, pswpout
	memAvailable     int64 // bytes
	haveLoad, haveVM bool
	haveMem          bool
}

// gateHook is the StartGate as the engine asks it (runhook.Gate): the
// engine lets a job start whatever the gate says when no other job runs.
type gateHook struct{ r *state }

// Open decides whether a job may start now (gateOpen).
func (h *gateHook) Open(now time.Time) bool { return h.r.gateOpen(now) }

// Allowed notes a start the engine let through while no other job ran.
func (h *gateHook) Allowed(now time.Time) { h.r.exec.gate.allowed(now) }

// allowed notes a start the gate let through.
func (s *gateState) allowed(now time.Time) {
	s.mu.Lock()
	s.started = now
	s.mu.Unlock()
}

// gateOpen decides whether a job may start now, reading the machine when
// the last decision is a second old, or 100 ms old and a job started
// since.
func (r *state) gateOpen(now time.Time) bool {
	g, s := &r.g.Exec.Gate, &r.exec.gate
	s.mu.Lock()
	defer s.mu.Unlock()
	age := now.Sub(s.at)
	if !s.at.IsZero() && age < time.Second && !(s.started.After(s.at) && age >= 100*time.Millisecond) {
		if s.open {
			s.started = now
		}
		return s.open
	}
	s.open, s.at = s.decide(g, now), now
	if s.open {
		s.started = now
	}
	return s.open
}

// decide reads the machine and applies g (under s.mu).
func (s *gateState) decide(g *StartGate, now time.Time) bool {
	read := s.readMachine
	if read == nil {
		read = readMachine
	}
	dir := s.procDir
	if dir == "" {
		dir = "/proc"
	}
	m, err := read(dir, g.MaxLoad > 0)
	if err != nil {
		// Unknown counts as busy, as GNU parallel's unknown load and swap.
		return false
	}
	open := true
	if g.MaxLoad > 0 && (!m.haveLoad || float64(m.load) >= g.MaxLoad) {
		open = false
	}
	if g.NoSwap {
		if !m.haveVM {
			open = false
		} else {
			if s.swapAt.IsZero() {
				s.swapAt, s.swapIn, s.swapOut = now, m.swapIn, m.swapOut
			} else if now.Sub(s.swapAt) >= time.Second {
				s.swapping = m.swapIn > s.swapIn && m.swapOut > s.swapOut
				s.swapVerdict = true
				s.swapAt, s.swapIn, s.swapOut = now, m.swapIn, m.swapOut
			}
			if !s.swapVerdict || s.swapping {
				open = false
			}
		}
	}
	if g.MemFree > 0 {
		if !(memory.FreeGate{Min: g.MemFree}).Start(memFree(g, m)) {
			open = false
		}
	}
	return open
}

// memFree is the free memory --memfree compares (memory.Free).
func memFree(g *StartGate, m machine) (int64, bool) {
	return memory.Free(m.memAvailable, m.haveMem, g.Memory)
}

// ErrMemFree is the error of an attempt stopped because free memory fell
// below half of StartGate.MemFree: the youngest running job is stopped
// (by its termination sequence) and runs again, as GNU parallel's
// --memfree does, without counting against runner.Config.Retries.
var ErrMemFree = errors.New("stopped and queued again: free memory fell below half of --memfree")

// memFreeInterval is how often the youngest running job checks the free
// memory against half of StartGate.MemFree (GNU parallel checks in its
// main loop, about once a second when no job ends).
const memFreeInterval = time.Second

// memFreeWatch returns the context of an attempt of j that is stopped with
// ErrMemFree when, while j is the youngest running job (the highest job
// number, as GNU parallel picks it) and another one runs, free memory is
// below half of StartGate.MemFree. The last running job is never stopped
// so: it would start again at once (a job starts when none runs). It is
// an attempt's bound (Install).
func (r *state) memFreeWatch(ctx context.Context, j runhook.Job) (context.Context, context.CancelFunc) {
	g := &r.g.Exec.Gate
	wctx, wcancel := context.WithCancelCause(ctx)
	go func() {
		t := time.NewTicker(memFreeInterval)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
			if !j.YoungestOfSeveral() {
				continue
			}
			if free, ok := r.exec.gate.memFree(g); (memory.FreeGate{Min: g.MemFree}).StopYoungest(free, ok) {
				r.log.Info("stopping the youngest job: free memory below half of --memfree", "seq", j.Item().Seq, "free", free, "memfree", g.MemFree)
				wcancel(ErrMemFree)
				return
			}
		}
	}()
	return wctx, func() { wcancel(nil) }
}

// memFree reads the free memory as StartGate.MemFree counts it.
func (s *gateState) memFree(g *StartGate) (int64, bool) {
	s.mu.Lock()
	read, dir := s.readMachine, s.procDir
	s.mu.Unlock()
	if read == nil {
		read = readMachine
	}
	if dir == "" {
		dir = "/proc"
	}
	m, err := read(dir, false)
	if err != nil {
		return 0, false
	}
	return memFree(g, m)
}
