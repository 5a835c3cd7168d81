package worker

import (
	"fmt"
	"time"

	"github.com/ration-run/ration/runner/event"
)

// resize sets the number of workers.
func (p *Pool) resize(n int, reason string) {
	n = max(n, 1)
	p.mu.Lock()
	if p.closed || n == p.size {
		p.mu.Unlock()
		return
	}
	p.size = n
	p.signalLocked() // an OOM re-dispatch waits for fewer tasks than the size
	live := p.liveLocked()
	for len(live) > n {
		// Retire idle workers first, then the highest slots.
		pick := 0
		for i, w := range live {
			if w.busy != live[pick].busy {
				if !w.busy {
					pick = i
				}
				continue
			}
			if w.slot > live[pick].slot {
				pick = i
			}
		}
		p.retireLocked(live[pick], "pool shrunk: "+reason)
		live = append(live[:pick], live[pick+1:]...)
	}
	p.reconcileLocked(false)
	p.mu.Unlock()
}

func (p *Pool) liveLocked() []*worker {
	var live []*worker
	for w := range p.workers {
		if !w.retiring {
			live = append(live, w)
		}
	}
	return live
}

func (p *Pool) retireLocked(w *worker, why string) {
	if w.retiring {
		return
	}
	w.retiring, w.why = true, why
	close(w.retire)
}

func (p *Pool) retireAllLocked(why string) {
	for w := range p.workers {
		p.retireLocked(w, why)
	}
}

// reconcileLocked starts workers until the pool has size live ones. It is
// the only place workers start, and it counts live workers only, so a
// retiring worker is never replaced by its own restart.
func (p *Pool) reconcileLocked(replacement bool) {
	if p.closed || p.paused || p.failErr != nil {
		return
	}
	for n := len(p.liveLocked()); n < p.size; n++ {
		slot := 1
		for p.slots[slot] {
			slot++
		}
		p.slots[slot] = true
		w := &worker{slot: slot, retire: make(chan struct{}), since: time.Now()}
		p.workers[w] = struct{}{}
		p.st.Starts++
		if replacement {
			p.st.Replacements++
			replacement = false
		}
		p.wg.Add(1)
		go p.runWorker(w)
	}
}

// ended is called once per worker when its process is gone. brk is non-nil
// when it broke, task the id of the task it broke on (0: none).
func (p *Pool) ended(w *worker, brk *BreakError, stderr []string, task int64) {
	var evs []event.Event
	p.mu.Lock()
	delete(p.workers, w)
	delete(p.slots, w.slot)
	if brk != nil && w.retiring {
		// A retiring worker is leaving anyway: its break is counted and
		// its task re-dispatched, but it says nothing about the health
		// of the pool that stays.
		p.st.Breaks[brk.Cause]++
	} else if brk != nil {
		p.st.Breaks[brk.Cause]++
		p.lastBreak, p.lastStderr = brk, stderr
		now := time.Now()
		p.breaks = append(p.breaks, breakRec{at: now, cause: brk.Cause, task: task, slot: w.slot, gen: p.okGen})
		for len(p.breaks) > 0 && now.Sub(p.breaks[0].at) > p.cfg.BreakWindow {
			p.breaks = p.breaks[1:]
		}
		if !p.closed && !p.paused && p.failErr == nil && p.systemicLocked() {
			evs = append(evs, p.recreateLocked())
		}
	} else {
		p.st.Retired++
	}
	p.reconcileLocked(brk != nil && !w.retiring)
	p.mu.Unlock()
	for _, e := range evs {
		p.emit(e)
	}
}

// succeededLocked records that a worker answered a task ok: the workers
// and their environment work, so the breaks before it no longer show that
// nothing does (systemicLocked).
func (p *Pool) succeededLocked() { p.okGen++ }

// systemicLocked reports whether the breaks in the window are systemic.
// Either nothing works: since the last task that succeeded, workers broke
// in as many slots as the pool has workers, on at least max(2, size/2)
// distinct tasks (the breaks caused by one task count once, each break
// with no task counts). Or memory is short: at least max(2, size/2)
// distinct tasks were OOM-killed, however many others succeed.
//
// So poison tasks, each quarantined on its own, are no reason to recreate
// the pool while other tasks succeed or still run: a worker busy with a
// healthy task keeps its slot from breaking, and a success clears the
// slate. Recreating would only make every task wait out a backoff and
// every worker lose its warm state, and Config.MaxRecreations could end
// the run. When every task crashes its worker, every slot breaks at once.
func (p *Pool) systemicLocked() bool {
	need := max(2, p.size/2)
	oomTasks, tasks, slots := map[int64]bool{}, map[int64]bool{}, map[int]bool{}
	oom, n := 0, 0
	for _, b := range p.breaks {
		if b.cause == event.CauseOOM && (b.task == 0 || !oomTasks[b.task]) {
			oomTasks[b.task] = true
			oom++
		}
		if b.gen != p.okGen {
			continue
		}
		slots[b.slot] = true
		if b.task == 0 || !tasks[b.task] {
			tasks[b.task] = true
			n++
		}
	}
	return oom >= need || (n >= need && len(slots) >= p.size)
}

// recreateLocked handles systemic breakage: retire every worker, pause,
// and schedule the restart after the backoff; or give up.
func (p *Pool) recreateLocked() event.Event {
	counts := map[event.Cause]int{}
	cause := event.CauseNone
	for _, b := range p.breaks {
		counts[b.cause]++
		if counts[b.cause] > counts[cause] || (counts[b.cause] == counts[cause] && b.cause == event.CauseOOM) {
			cause = b.cause
		}
	}
	n := len(p.breaks)
	p.breaks = nil
	p.recreateRun++
	if p.recreateRun > p.cfg.MaxRecreations {
		// Giving up is reported as a PoolRecreated with Err set, but it
		// recreates nothing: Stats.Recreations stays at MaxRecreations.
		p.failErr = &BrokenError{Recreations: p.recreateRun - 1, Last: p.lastBreak, LastStderr: p.lastStderr}
		close(p.failed)
		p.signalLocked() // an OOM re-dispatch waiting for room ends
		p.retireAllLocked("pool gave up")
		return event.Event{Kind: event.PoolRecreated, Size: 0, Cause: cause, Err: p.failErr,
			Reason: fmt.Sprintf("%d workers broke within %v (mostly %s); giving up: %v", n, p.cfg.BreakWindow, cause, p.failErr)}
	}
	p.st.Recreations++
	backoff := p.cfg.Backoff << min(p.recreateRun-1, 5)
	p.paused = true
	p.retireAllLocked("pool recreated")
	p.wg.Add(1)
	p.pauseTimer = time.AfterFunc(backoff, p.unpause)
	return event.Event{Kind: event.PoolRecreated, Size: p.size, Cause: cause,
		Reason: fmt.Sprintf("%d workers broke within %v (mostly %s): retired all workers, restarting in %v", n, p.cfg.BreakWindow, cause, backoff)}
}

func (p *Pool) unpause() {
	defer p.wg.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = false
	p.pauseTimer = nil
	p.breaks = nil
	p.reconcileLocked(false)
}
