package logs

import (
	"context"
	"log/slog"
	"unicode/utf8"

	"github.com/ration-run/ration/runner/event"
)

// MaxInputLen is how many bytes of a job's input a log record carries; a
// longer input is cut at a rune boundary and ends in "...".
const MaxInputLen = 200

// Observer logs a run's events. It is an event.Observer; create it with
// NewObserver.
type Observer struct {
	l     *slog.Logger
	quiet bool
}

// NewObserver returns an Observer logging to l. Records and levels:
//
//	job_started    debug  seq slot pid attempt input queue_wait
//	job_finished   debug  succeeded or not_started
//	               info   stopped (by the run: an interrupt, --halt now)
//	               warn   failed, quarantined (exit, signal, cause, err)
//	job_retried    info   seq attempt exit signal cause err duration
//	job_skipped    debug  seq input
//	worker_started debug  slot pid
//	worker_broken  warn   slot pid cause err
//	worker_retired info   slot pid reason
//	pool_resized   info   size reason
//	pool_recreated warn   size reason
//
// Every record has an "event" attribute with the kind's name, so JSON logs
// can be filtered on it. A failed job is one record, which carries its
// error: run it with runner.Config.OmitErrorLines so that the error is not
// also written into the job's stderr.
//
// With opts.Quiet (--quiet) no job record is logged, failures included:
// the exit status, the joblog and the metrics count them. Records about
// ration itself (worker breaks, pool recreation) stay.
func NewObserver(l *slog.Logger, opts Options) *Observer {
	return &Observer{l: l, quiet: opts.Quiet}
}

// Observe logs e. It is safe for concurrent use.
func (o *Observer) Observe(e event.Event) {
	r := &record{e: e, attrs: make([]slog.Attr, 0, 12)}
	r.add(slog.String("event", e.Kind.String()))
	var level slog.Level
	var msg string
	switch e.Kind {
	case event.JobStarted, event.JobFinished, event.JobRetried, event.JobSkipped:
		if o.quiet {
			return
		}
		level, msg = r.jobRecord()
	default:
		level, msg = r.poolRecord()
	}
	ctx := context.Background()
	if !o.l.Enabled(ctx, level) {
		return
	}
	o.l.LogAttrs(ctx, level, msg, r.attrs...)
}

// record collects the attributes of one event's log record, in the order
// the records have always had them.
type record struct {
	e     event.Event
	attrs []slog.Attr
}

func (r *record) add(a ...slog.Attr) { r.attrs = append(r.attrs, a...) }

// jobRecord is the record of a job event.
func (r *record) jobRecord() (slog.Level, string) {
	e := r.e
	switch e.Kind {
	case event.JobStarted:
		r.job()
		r.input()
		r.add(slog.Duration("queue_wait", e.QueueWait))
		return slog.LevelDebug, "job started"
	case event.JobFinished:
		r.job()
		level, msg := finished(e.Outcome)
		r.add(slog.String("outcome", e.Outcome.String()))
		if e.Outcome != event.NotStarted {
			r.end()
		}
		r.input()
		return level, msg
	case event.JobRetried:
		r.job()
		r.end()
		r.input()
		return slog.LevelInfo, "job retried"
	}
	r.add(slog.Int64("seq", e.Seq))
	r.input()
	return slog.LevelDebug, "job skipped"
}

// finished is the level and message of a JobFinished with outcome o.
func finished(o event.Outcome) (slog.Level, string) {
	switch o {
	case event.Succeeded:
		return slog.LevelDebug, "job succeeded"
	case event.NotStarted:
		return slog.LevelDebug, "job not started"
	case event.Quarantined:
		return slog.LevelWarn, "job quarantined"
	case event.Stopped:
		return slog.LevelInfo, "job stopped"
	}
	return slog.LevelWarn, "job failed"
}

// poolRecord is the record of a worker or pool event.
func (r *record) poolRecord() (slog.Level, string) {
	e := r.e
	switch e.Kind {
	case event.WorkerStarted:
		r.worker()
		return slog.LevelDebug, "worker started"
	case event.WorkerBroken:
		r.worker()
		r.broken()
		return slog.LevelWarn, "worker broken"
	case event.WorkerRetired:
		level := slog.LevelInfo
		if e.Reason == event.ReasonPoolClosed {
			level = slog.LevelDebug // every worker of every run ends so
		}
		r.worker()
		r.add(slog.String("reason", e.Reason))
		return level, "worker retired"
	case event.PoolResized:
		r.pool()
		return slog.LevelInfo, "pool resized"
	case event.PoolRecreated:
		r.pool()
		return slog.LevelWarn, "pool recreated"
	}
	r.add(slog.Int("kind", int(e.Kind)))
	return slog.LevelWarn, "unknown event"
}

// job adds what names a job's attempt.
func (r *record) job() {
	e := r.e
	r.add(slog.Int64("seq", e.Seq))
	if e.Slot > 0 {
		r.add(slog.Int("slot", e.Slot))
	}
	if e.PID > 0 {
		r.add(slog.Int("pid", e.PID))
	}
	if e.Attempt > 1 || e.Kind == event.JobRetried {
		r.add(slog.Int("attempt", e.Attempt))
	}
}

// end adds how an attempt ended.
func (r *record) end() {
	e := r.e
	r.add(slog.Duration("duration", e.Duration), slog.Int("exit", e.ExitCode))
	if e.Signal != 0 {
		r.add(slog.Int("signal", e.Signal))
	}
	if e.Cause != event.CauseNone {
		r.add(slog.String("cause", string(e.Cause)))
	}
	if e.PeakRSS > 0 {
		r.add(slog.Int64("peak_rss_bytes", e.PeakRSS))
	}
	if e.Err != nil {
		r.add(slog.String("err", e.Err.Error()))
	}
}

func (r *record) input() { r.add(slog.String("input", truncate(r.e.Input, MaxInputLen))) }

// worker adds what names a worker.
func (r *record) worker() {
	if r.e.Slot > 0 {
		r.add(slog.Int("slot", r.e.Slot))
	}
	if r.e.PID > 0 {
		r.add(slog.Int("pid", r.e.PID))
	}
}

// broken adds why a worker broke and on which task.
func (r *record) broken() {
	e := r.e
	cause := string(e.Cause)
	if cause == "" {
		cause = "unknown"
	}
	r.add(slog.String("cause", cause))
	if e.Seq > 0 {
		r.add(slog.Int64("seq", e.Seq))
	}
	if e.Err != nil {
		r.add(slog.String("err", e.Err.Error()))
	}
}

func (r *record) pool() { r.add(slog.Int("size", r.e.Size), slog.String("reason", r.e.Reason)) }

// truncate cuts s to at most n bytes at a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
