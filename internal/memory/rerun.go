package memory

import (
	"context"
	"sync"
	"time"
)

// Reruns is where OOM-killed attempts wait for room to run again (rule 2
// of OOM kills): one waits ([Reruns.Wait]) until fewer attempts are in
// flight than both the run's concurrency and its own bound (half of those
// that ran at the kill, [OOMRetry.Below]), and while any waits, first
// attempts are held back ([Reruns.Holding]), so that the number in flight
// really drops instead of being refilled by new work. The job runner and
// the worker pool both wait here.
//
// An attempt that Wait lets go counts as claimed until its owner starts it
// ([Reruns.Running] or [Reruns.Started]) or gives it up
// ([Reruns.Unclaim]): a claimed re-run is in flight for the next waiter,
// so two re-runs never take the same room. One that runs under Running
// keeps its bound: while it runs, first attempts are held once as many
// attempts as its bound are in flight.
//
// L guards a Reruns and whatever the functions passed to Wait read (the
// owner's count of attempts in flight, its concurrency): every method is
// called with L held, as with [sync.Cond]. Wait unlocks L while it blocks.
// Use [NewReruns]; a Reruns must not be copied.
type Reruns struct {
	// L is held by the caller of every method.
	L sync.Locker
	// Changed, when set, is called with L held whenever Wait changes the
	// counts (a re-run starts or stops waiting, or is let go), so that the
	// owner can wake what waits on Holding. Wait does not call it when
	// its owner's own calls (Running, Started, Unclaim, Ended) change
	// them: the owner knows then.
	Changed func()
	// Poll, when > 0, makes Wait look again at least this often, for
	// owners that do not Signal every change of what room reads.
	Poll time.Duration
	// Stop, when set, wakes Wait when it is closed (stopped is asked then).
	Stop <-chan struct{}

	held    int         // re-runs in Wait
	claimed int         // re-runs let go by Wait, not yet started or given up
	running map[any]int // re-runs started with Running: their bound
	wake    chan struct{}
}

// NewReruns returns an empty Reruns guarded by l.
func NewReruns(l sync.Locker) *Reruns {
	return &Reruns{L: l, running: map[any]int{}, wake: make(chan struct{})}
}

// Signal wakes the re-runs in Wait to look again. The owner calls it (L
// held) whenever what room or stopped read may have changed: an attempt
// ended, the concurrency changed, the run stops.
func (q *Reruns) Signal() {
	close(q.wake)
	q.wake = make(chan struct{})
}

// Wait waits until an OOM-killed attempt may run again: until the
// attempts in flight (inFlight of room, plus the re-runs let go before
// this one and not yet started) are fewer than both size of room and
// below ([OOMRetry.Ready]; values below 1 count as 1). room and stopped
// are called with L held, each time Wait looks: at its call, after a
// Signal, when Stop closes, when ctx ends and every Poll. stopped is asked
// first (after ctx): a non-nil error ends the wait with it (ctx's end
// ends it with context.Cause). On a nil return the attempt counts as
// claimed, and the caller must start it (Running or Started) or Unclaim
// it.
func (q *Reruns) Wait(ctx context.Context, below int, room func() (inFlight, size int), stopped func() error) error {
	var tick <-chan time.Time
	if q.Poll > 0 {
		t := time.NewTicker(q.Poll)
		defer t.Stop()
		tick = t.C
	}
	q.held++
	q.changed()
	for {
		err := context.Cause(ctx)
		if err == nil && stopped != nil {
			err = stopped()
		}
		if err != nil {
			q.held--
			q.changed()
			return err
		}
		inFlight, size := room()
		if (OOMRetry{}).Ready(inFlight+q.claimed, min(max(size, 1), max(below, 1))) {
			q.held--
			q.claimed++
			q.changed()
			return nil
		}
		wake := q.wake
		q.L.Unlock()
		select {
		case <-wake:
		case <-tick:
		case <-ctx.Done():
		case <-q.Stop:
		}
		q.L.Lock()
	}
}

func (q *Reruns) changed() {
	if q.Changed != nil {
		q.Changed()
	}
}

// Unclaim gives up a re-run that Wait let go and that will not run (now:
// it may Wait again).
func (q *Reruns) Unclaim() { q.claimed-- }

// Started counts a re-run that Wait let go as started: from now on it is
// counted in flight by the owner's inFlight, and it bounds nothing more.
func (q *Reruns) Started() { q.claimed-- }

// Running is Started for a re-run that keeps its bound below while it
// runs, until Ended(key): first attempts are held while as many attempts
// as its bound are in flight (Holding).
func (q *Reruns) Running(key any, below int) {
	q.claimed--
	q.running[key] = max(below, 1)
}

// Ended forgets the bound of the re-run started with Running(key); a key
// that is not running is ignored.
func (q *Reruns) Ended(key any) { delete(q.running, key) }

// Waiting reports whether a re-run waits in Wait or was let go and not
// yet started.
func (q *Reruns) Waiting() bool { return q.held > 0 || q.claimed > 0 }

// Holding reports whether first attempts must wait: a re-run waits or was
// let go and not yet started (Waiting), or one runs under Running and
// inFlight attempts are in flight, as many as the smallest of size and
// the running re-runs' bounds.
func (q *Reruns) Holding(inFlight, size int) bool {
	if q.Waiting() {
		return true
	}
	if len(q.running) == 0 {
		return false
	}
	capN := size
	for _, b := range q.running {
		capN = min(capN, b)
	}
	return inFlight >= capN
}
