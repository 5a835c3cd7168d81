package worker

import (
	"fmt"
	"syscall"
	"time"

	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/runner/event"
)

// workerEnd is how serve ended.
type workerEnd struct {
	brk     *BreakError // the worker broke
	stderr  []string    // its last stderr lines, when it broke
	pending *attempt    // the attempt it broke on, to hand back after the pool knows
	result  attemptResult
	killed  string // it was killed on purpose (its task was cancelled, or Close gave up)
}

// runWorker is one worker's life: start, serve tasks one at a time, end.
func (p *Pool) runWorker(w *worker) {
	defer p.wg.Done()
	pr, err := p.startProc(w.slot)
	if err != nil {
		brk := &BreakError{Cause: event.CauseExit, Slot: w.slot, ExitCode: -1, Detail: err.Error()}
		p.log.Warn("worker failed to start", "slot", w.slot, "err", err)
		p.emit(event.Event{Kind: event.WorkerBroken, Slot: w.slot, Cause: brk.Cause, ExitCode: -1, Err: brk})
		p.ended(w, brk, nil, 0)
		return
	}
	p.mu.Lock()
	w.pid, w.since = pr.pid, time.Now()
	p.mu.Unlock()
	p.emit(event.Event{Kind: event.WorkerStarted, Slot: w.slot, PID: pr.pid})

	end := p.serve(w, pr)
	pr.release()
	var task int64
	switch {
	case end.brk != nil:
		e := event.Event{Kind: event.WorkerBroken, Slot: w.slot, PID: pr.pid, Cause: end.brk.Cause,
			ExitCode: end.brk.ExitCode, Signal: int(end.brk.Signal), Err: end.brk}
		if a := end.pending; a != nil && !end.brk.unread {
			// A break on a task; one before the worker read it is the
			// worker's own, as while idle.
			task = a.id
			e.Seq, e.Input, e.Attempt = a.task.Seq, a.task.Input, a.n
		}
		p.mu.Lock()
		if w.retiring {
			e.Reason = "broke while retiring (" + w.why + "); not restarted"
		}
		p.mu.Unlock()
		p.emit(e)
	default:
		why := end.killed
		if why == "" {
			p.mu.Lock()
			why = w.why
			p.mu.Unlock()
		}
		p.emit(event.Event{Kind: event.WorkerRetired, Slot: w.slot, PID: pr.pid, Reason: why})
	}
	p.ended(w, end.brk, end.stderr, task)
	if end.pending != nil {
		// Handed back only now, so a re-dispatch finds the replacement
		// already starting and the systemic-breakage check already done.
		end.pending.done <- end.result
	}
}

// serve runs tasks on pr until the worker retires, is killed or breaks. On
// return the process has been reaped.
func (p *Pool) serve(w *worker, pr *proc) workerEnd {
	tasks := 0
	for {
		a, brk := p.next(w, pr)
		if brk != nil {
			pr.killAndWait()
			return workerEnd{brk: brk, stderr: pr.lastStderr()}
		}
		if a == nil {
			p.stop(pr)
			return workerEnd{}
		}
		r, brk := p.runTask(w, pr, a)
		p.mu.Lock()
		w.busy, w.input, w.seq, w.since = false, "", 0, time.Now()
		p.reruns.Ended(a)
		if brk == nil && r.taskErr == nil && r.aborted == nil {
			p.succeededLocked()
		}
		others := p.busyLocked()
		p.signalLocked()
		p.mu.Unlock()
		if brk != nil {
			r.brk, r.stderr, r.others = brk, pr.lastStderr(), others
			return workerEnd{brk: brk, stderr: r.stderr, pending: a, result: r}
		}
		a.done <- r
		if r.aborted != nil {
			return workerEnd{killed: "killed: " + r.aborted.Error()}
		}
		tasks++
		recycle := ""
		if p.cfg.MaxTasks > 0 && tasks >= p.cfg.MaxTasks {
			recycle = fmt.Sprintf("recycled after %d tasks", tasks)
		} else if p.cfg.MaxRSS > 0 && r.rss > p.cfg.MaxRSS {
			recycle = fmt.Sprintf("recycled: process tree RSS %d bytes > %d", r.rss, p.cfg.MaxRSS)
		}
		if recycle != "" {
			p.mu.Lock()
			if !w.retiring {
				p.st.Recycled++
				p.retireLocked(w, recycle)
				p.reconcileLocked(false) // the fresh worker starts while this one stops
			}
			p.mu.Unlock()
		}
	}
}

// next waits for the worker's next task. It returns (nil, nil) when the
// worker is to retire, and a break when the worker died or wrote while idle.
// While an OOM re-dispatch waits for room (waitRoom), it takes no first
// attempt.
func (p *Pool) next(w *worker, pr *proc) (*attempt, *BreakError) {
	if p.isRetiring(w) {
		return nil, nil
	}
	select {
	case a := <-p.retryq:
		if got, again := p.take(w, a); !again {
			return got, nil
		}
	default:
	}
	for {
		p.mu.Lock()
		taskq, wake := p.taskq, p.holdWake
		if p.held {
			taskq = nil
		}
		p.mu.Unlock()
		a, brk, again := p.idle(w, pr, taskq, wake)
		if !again {
			return a, brk
		}
	}
}

// idle is one wait of an idle worker in next; again reports that next is
// to look again (wake fired, or a first attempt came as the pool began to
// hold them).
func (p *Pool) idle(w *worker, pr *proc, taskq chan *attempt, wake chan struct{}) (a *attempt, brk *BreakError, again bool) {
	select {
	case a := <-p.retryq:
		a, again := p.take(w, a)
		return a, nil, again
	case a := <-taskq:
		a, again := p.take(w, a)
		return a, nil, again
	case <-wake:
		return nil, nil, true
	case <-w.retire:
		return nil, nil, false
	case <-p.killAll:
		return nil, nil, false
	case m, ok := <-pr.lines:
		if !ok {
			if !waitExit(pr, time.Second) {
				return nil, &BreakError{Cause: event.CauseProtocol, Slot: w.slot, PID: pr.pid, ExitCode: -1, Detail: "closed its stdout"}, false
			}
			if p.isRetiring(w) {
				return nil, nil, false
			}
			return nil, p.exitBreak(w, pr, -1, "while idle"), false
		}
		return nil, &BreakError{Cause: event.CauseProtocol, Slot: w.slot, PID: pr.pid, ExitCode: -1,
			Detail: "wrote while it had no task: " + quoteLine(m.line)}, false
	case <-pr.exited:
		if p.isRetiring(w) {
			return nil, nil, false // a retiring worker may go; it is not restarted either way
		}
		return nil, p.exitBreak(w, pr, -1, "while idle"), false
	}
}

func (p *Pool) isRetiring(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return w.retiring
}

// take gives a to w. It hands a back to its Run, to be dispatched again,
// when w is retiring (a recreation or shrink retired it while it waited;
// take returns nil, false: w is to stop) or when a is a first attempt and
// the pool holds those for an OOM re-dispatch (nil, true: w is to wait
// again).
func (p *Pool) take(w *worker, a *attempt) (got *attempt, again bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.signalLocked()
	// A re-dispatch (below > 0) is never a first attempt: only a retiring
	// worker hands it back.
	if w.retiring || (a.n == 1 && p.holdingLocked()) {
		if a.below > 0 {
			p.reruns.Unclaim()
		}
		a.done <- attemptResult{notTaken: true} // buffered, and this attempt's only result
		return nil, !w.retiring
	}
	w.busy, w.input, w.seq, w.since = true, a.task.Input, a.task.Seq, time.Now()
	if a.below > 0 {
		p.reruns.Running(a, a.below)
	}
	return a, false
}

// waitExit waits up to d for the worker to be reaped.
func waitExit(pr *proc, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-pr.exited:
		return true
	case <-t.C:
		return false
	}
}

// stop ends a retiring worker: close its stdin (the protocol's "exit
// now"), give it StopGrace, then kill its process group.
func (p *Pool) stop(pr *proc) {
	pr.stdin.Close()
	t := time.NewTimer(p.cfg.StopGrace)
	defer t.Stop()
	select {
	case <-pr.exited:
	case <-t.C:
	case <-p.killAll:
	}
	pr.killAndWait()
}

// exitBreak classifies a worker that ended on its own. base is the OOM
// counter before the task, -1 when unknown.
func (p *Pool) exitBreak(w *worker, pr *proc, base int64, when string) *BreakError {
	code, sig := pr.status()
	b := &BreakError{Slot: w.slot, PID: pr.pid, ExitCode: code, Signal: sig, When: when}
	switch {
	case sig == syscall.SIGKILL && base >= 0 && memory.Rose(pr.oomKills, base):
		b.Cause = event.CauseOOM
	case sig != 0:
		b.Cause = event.CauseSignal
	default:
		b.Cause = event.CauseExit
	}
	return b
}
