package worker

import (
	"context"

	"github.com/ration-run/ration/internal/memory"
)

// oomVerdict applies memory.OOMRetry.DecideFirstFree to the kills-th OOM kill of a task,
// seen while others other tasks were in flight. The first kill is always
// re-dispatched (the kernel may have been pushed over the limit by a
// process that is not a task), as the runner does for a job.
func (p *Pool) oomVerdict(kills, others int) memory.Verdict {
	return memory.OOMRetry{MaxKills: p.cfg.OOMAttempts}.DecideFirstFree(memory.OOMKill{Kills: kills, Others: others}, "re-dispatched")
}

// waitRoom waits until an OOM-killed task may be dispatched again: until
// the tasks in flight (busy workers, retiring ones included, and OOM
// re-dispatches let go before it) are fewer than both the pool's size and
// below (memory.OOMRetry.Ready). While it waits no worker takes a first
// attempt, so the number in flight really drops. On a nil return the
// attempt is counted in oomClaimed, and the caller must dispatch it (take
// uncounts it) or call unclaim. It returns the pool's or ctx's error when
// either ends first.
func (p *Pool) waitRoom(ctx context.Context, below int) error {
	p.mu.Lock()
	p.oomHeld++
	p.signalLocked()
	for {
		if (memory.OOMRetry{}).Ready(p.busyLocked()+p.oomClaimed, min(p.size, below)) {
			p.oomHeld--
			p.oomClaimed++
			p.signalLocked()
			p.mu.Unlock()
			return nil
		}
		wake := p.wake
		p.mu.Unlock()
		var err error
		select {
		case <-wake:
		case <-ctx.Done():
			err = context.Cause(ctx)
		case <-p.closing:
			err = ErrClosed
		case <-p.failed:
			err = p.failure()
		}
		p.mu.Lock()
		if err != nil {
			p.oomHeld--
			p.signalLocked()
			p.mu.Unlock()
			return err
		}
	}
}

// unclaim uncounts an OOM re-dispatch that no worker took.
func (p *Pool) unclaim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.oomClaimed--
	p.signalLocked()
}

// holdingLocked reports whether first attempts wait for an OOM
// re-dispatch: one waits for room or is on its way to a worker, or one
// runs and as many tasks as its below are in flight (it runs at the
// lowered concurrency until it ends, also where no controller halves the
// pool's size).
func (p *Pool) holdingLocked() bool {
	if p.oomHeld > 0 || p.oomClaimed > 0 {
		return true
	}
	if len(p.oomCaps) == 0 {
		return false
	}
	capN := p.size
	for _, b := range p.oomCaps {
		capN = min(capN, b)
	}
	return p.busyLocked() >= capN
}

// busyLocked counts the workers running a task, retiring ones included.
func (p *Pool) busyLocked() int {
	n := 0
	for w := range p.workers {
		if w.busy {
			n++
		}
	}
	return n
}

// signalLocked wakes whoever waits for the busy count, the size or the
// OOM re-dispatch counts to change, and the idle workers when whether
// first attempts are held changed.
func (p *Pool) signalLocked() {
	close(p.wake)
	p.wake = make(chan struct{})
	if h := p.holdingLocked(); h != p.held {
		p.held = h
		close(p.holdWake)
		p.holdWake = make(chan struct{})
	}
}
