package worker

import (
	"errors"
	"fmt"
	"time"

	"github.com/ration-run/ration/runner/event"
)

var errAborted = errors.New("worker: task aborted")

// StderrAnswerGrace is how long a task waits for its answer on stdout once
// its worker wrote it on stderr (a mistake, or a log of the answer it is
// about to send): then the worker breaks with a protocol error instead
// of holding the task until its timeout, or forever.
const StderrAnswerGrace = 2 * time.Second

// taskRun is one attempt of a task on one worker, from the write of the
// request to the answer or the break.
type taskRun struct {
	p     *Pool
	w     *worker
	pr    *proc
	a     *attempt
	id    int64     // the request id
	start time.Time // when the worker took the task
	base  int64     // the OOM counter before the task, -1 when unknown

	req     []byte
	written chan error // the request's write returned
	writing bool       // it has not yet
	wrote   int        // bytes of req written, set before the send on written
	wErr    error      // the write's error, likewise
	r       attemptResult
}

// runTask runs one attempt on the worker. A non-nil break means the worker
// is dead and reaped.
func (p *Pool) runTask(w *worker, pr *proc, a *attempt) (attemptResult, *BreakError) {
	id := a.task.Seq
	if id <= 0 {
		id = p.nextID.Add(1)
	}
	now := time.Now()
	t := &taskRun{p: p, w: w, pr: pr, a: a, id: id, start: now,
		r: attemptResult{slot: w.slot, pid: pr.pid, start: now}}
	if a.task.Started != nil {
		a.task.Started(w.slot, pr.pid)
	}
	t.base = pr.oomKills()
	t.write()
	var timeout <-chan time.Time
	if p.cfg.Timeout > 0 {
		tm := time.NewTimer(p.cfg.Timeout)
		defer tm.Stop()
		timeout = tm.C
	}
	var onStderr <-chan time.Time // set once the worker answered this task on stderr
	for {
		var wch chan error
		if t.writing {
			wch = t.written
		}
		select {
		case id := <-pr.stderrIDs:
			if id == t.id && onStderr == nil {
				tm := time.NewTimer(StderrAnswerGrace)
				defer tm.Stop()
				onStderr = tm.C
			}
		case <-onStderr:
			return t.protocol(fmt.Sprintf("answered task %d on its stderr and not on its stdout within %s: answers go to stdout, one JSON line each (docs/workers.md)", t.id, StderrAnswerGrace))
		case err := <-wch:
			t.writing = false
			if err != nil {
				return t.writeFailed()
			}
		case m, ok := <-pr.lines:
			return t.line(m, ok)
		case <-pr.exited:
			return t.died()
		case <-timeout:
			return t.timedOut()
		case <-a.abort:
			return t.abort(errAborted)
		case <-p.killAll:
			return t.abort(ErrClosed)
		}
	}
}

// write sends the request on its own goroutine, so that a worker that
// does not read its stdin cannot hold the task past the timeout or a
// cancellation.
func (t *taskRun) write() {
	t.written = make(chan error, 1)
	t.req = encodeRequest(t.id, t.a.task.Input)
	go func() {
		t.wrote, t.wErr = t.pr.stdin.Write(t.req)
		t.written <- t.wErr
	}()
	t.writing = true
}

// unread reports, once the worker is dead and the write returned, that
// the worker had not read any of its request: none of it could be written
// (no reader was left), or all that was written (a request larger than
// the pipe: until the worker died) is still in the pipe. Such a worker
// did not break on the task, which is not charged for it (Pool.Run).
func (t *taskRun) unread() bool {
	switch {
	case t.writing:
		return false // not known
	case t.wrote == 0:
		return t.wErr != nil
	}
	return pipeBuffered(t.pr.stdin) >= t.wrote
}

// waitWrite waits for the request's write to return: at once when the
// process is dead; when someone outside the process group still holds the
// pipe, closing our end makes it return.
func (t *taskRun) waitWrite() {
	if !t.writing {
		return
	}
	t.writing = false
	tm := time.NewTimer(time.Second)
	defer tm.Stop()
	select {
	case <-t.written:
	case <-tm.C:
		t.pr.stdin.Close()
		<-t.written
	}
}

// fail kills the worker and returns its break, marked unread when the
// worker broke before it read the task. A timeout is the task's even
// then: Config.Timeout counts from the handing over, a fresh worker's
// startup included.
func (t *taskRun) fail(b *BreakError) (attemptResult, *BreakError) {
	t.pr.killAndWait()
	t.waitWrite()
	if b.Cause != event.CauseTimeout && t.unread() {
		b.unread = true
		if b.Cause != event.CauseProtocol {
			b.When = "before reading its task"
		}
	}
	t.r.duration = time.Since(t.start)
	return t.r, b
}

func (t *taskRun) protocol(detail string) (attemptResult, *BreakError) {
	return t.fail(&BreakError{Cause: event.CauseProtocol, Slot: t.w.slot, PID: t.pr.pid, ExitCode: -1, Detail: detail})
}

// exited is the break of a worker that ended on its own.
func (t *taskRun) exited(when string) (attemptResult, *BreakError) {
	return t.fail(t.p.exitBreak(t.w, t.pr, t.base, when))
}

// writeFailed: the worker closed its stdin or died; its exit says why.
func (t *taskRun) writeFailed() (attemptResult, *BreakError) {
	if !waitExit(t.pr, time.Second) {
		return t.protocol("closed its stdin while a task was pending")
	}
	return t.exited("before reading its task")
}

// answer takes a stdout line as the task's answer; broke reports a
// protocol break (the worker is dead then).
func (t *taskRun) answer(m lineMsg) (res attemptResult, b *BreakError, broke bool) {
	if m.err != nil {
		res, b = t.protocol(fmt.Sprintf("%v (%d bytes): %s", m.err, t.p.cfg.MaxLine, quoteLine(m.line)))
		return res, b, true
	}
	resp, err := parseResponse(m.line, t.id)
	if err != nil {
		res, b = t.protocol(err.Error())
		var wrong *wrongIDError
		b.workerOnly = errors.As(err, &wrong)
		return res, b, true
	}
	t.r.duration = time.Since(t.start)
	if *resp.OK {
		t.r.output = resp.Output
	} else {
		t.r.taskErr = &TaskError{Message: *resp.Error}
	}
	return t.r, nil, false
}

// line handles a line of the worker's stdout while the task runs, or its
// end (ok false).
func (t *taskRun) line(m lineMsg, ok bool) (attemptResult, *BreakError) {
	if !ok {
		if !waitExit(t.pr, time.Second) {
			return t.protocol("closed its stdout while a task was pending")
		}
		return t.exited("while running a task")
	}
	res, b, broke := t.answer(m)
	if broke {
		return res, b
	}
	if t.writing {
		// It answered before our write returned: fine for a request that
		// fits the pipe; otherwise it answered a line it had not read in
		// full.
		select {
		case err := <-t.written:
			t.writing = false
			if err != nil {
				return t.protocol("answered a task it could not have read")
			}
		case <-time.After(time.Second):
			return t.protocol("answered before reading its whole task line")
		}
	}
	if t.p.cfg.MaxRSS > 0 || t.p.cfg.SampleRSS {
		if rss, err := treeRSS(t.pr.pid); err == nil {
			res.rss = rss
		}
	}
	return res, nil
}

// died handles the worker's death while it ran the task: it may have
// answered just before, so its stdout is drained first.
func (t *taskRun) died() (attemptResult, *BreakError) {
	tm := time.NewTimer(time.Second)
	defer tm.Stop()
	select {
	case m, ok := <-t.pr.lines:
		if !ok {
			break
		}
		res, b, broke := t.answer(m)
		if broke {
			return res, b
		}
		t.waitWrite()
		return res, nil // the death is noticed by next, as a break while idle
	case <-tm.C:
	}
	return t.exited("while running a task")
}

// timedOut kills a worker that exceeded Config.Timeout.
func (t *taskRun) timedOut() (attemptResult, *BreakError) {
	res, b := t.fail(&BreakError{Cause: event.CauseTimeout, Slot: t.w.slot, PID: t.pr.pid, ExitCode: -1, Timeout: t.p.cfg.Timeout})
	// The signal that ended it (our SIGKILL, unless it died of something
	// else first) goes into the joblog of a quarantined task.
	_, b.Signal = t.pr.status()
	return res, b
}

// abort kills the worker because the task's owner gave up (why: errAborted)
// or Close gave up waiting (ErrClosed).
func (t *taskRun) abort(why error) (attemptResult, *BreakError) {
	t.pr.killAndWait()
	t.waitWrite()
	t.r.aborted = why
	return t.r, nil
}
