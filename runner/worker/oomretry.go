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

// waitRoom waits until an OOM-killed task may be dispatched again
// (memory.Reruns.Wait): until the tasks in flight (busy workers, retiring
// ones included, and OOM re-dispatches let go before it) are fewer than
// both the pool's size and below. While it waits no worker takes a first
// attempt, so the number in flight really drops. On a nil return the
// attempt is claimed, and the caller must dispatch it (take starts or
// gives it up) or call unclaim. It returns ctx's or the pool's error when
// either ends first.
func (p *Pool) waitRoom(ctx context.Context, below int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reruns.Wait(ctx, below, func() (int, int) { return p.busyLocked(), p.size }, p.endedLocked)
}

// endedLocked is the pool's error once it is closed (ErrClosed) or gave
// up, nil before.
func (p *Pool) endedLocked() error {
	select {
	case <-p.closing:
		return ErrClosed
	case <-p.failed:
		return p.failErr
	default:
		return nil
	}
}

// unclaim gives up an OOM re-dispatch that no worker took.
func (p *Pool) unclaim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reruns.Unclaim()
	p.signalLocked()
}

// holdingLocked reports whether first attempts wait for an OOM
// re-dispatch (memory.Reruns.Holding): one waits for room or is on its
// way to a worker, or one runs and as many tasks as its below are in
// flight (it runs at the lowered concurrency until it ends, also where no
// controller halves the pool's size).
func (p *Pool) holdingLocked() bool { return p.reruns.Holding(p.busyLocked(), p.size) }

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
	p.reruns.Signal()
	if h := p.holdingLocked(); h != p.held {
		p.held = h
		close(p.holdWake)
		p.holdWake = make(chan struct{})
	}
}
