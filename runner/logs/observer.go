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
	l *slog.Logger
}

// NewObserver returns an Observer logging to l. Records and levels:
//
//	job_started    debug  seq slot pid attempt input queue_wait
//	job_finished   debug  succeeded or not_started
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
// can be filtered on it.
func NewObserver(l *slog.Logger) *Observer { return &Observer{l: l} }

// Observe logs e. It is safe for concurrent use.
func (o *Observer) Observe(e event.Event) {
	level, msg := slog.LevelDebug, ""
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs, slog.String("event", e.Kind.String()))
	job := func() {
		attrs = append(attrs, slog.Int64("seq", e.Seq))
		if e.Slot > 0 {
			attrs = append(attrs, slog.Int("slot", e.Slot))
		}
		if e.PID > 0 {
			attrs = append(attrs, slog.Int("pid", e.PID))
		}
		if e.Attempt > 1 || e.Kind == event.JobRetried {
			attrs = append(attrs, slog.Int("attempt", e.Attempt))
		}
	}
	end := func() {
		attrs = append(attrs, slog.Duration("duration", e.Duration), slog.Int("exit", e.ExitCode))
		if e.Signal != 0 {
			attrs = append(attrs, slog.Int("signal", e.Signal))
		}
		if e.Cause != event.CauseNone {
			attrs = append(attrs, slog.String("cause", string(e.Cause)))
		}
		if e.PeakRSS > 0 {
			attrs = append(attrs, slog.Int64("peak_rss_bytes", e.PeakRSS))
		}
		if e.Err != nil {
			attrs = append(attrs, slog.String("err", e.Err.Error()))
		}
	}
	input := func() { attrs = append(attrs, slog.String("input", truncate(e.Input, MaxInputLen))) }
	worker := func() {
		if e.Slot > 0 {
			attrs = append(attrs, slog.Int("slot", e.Slot))
		}
		if e.PID > 0 {
			attrs = append(attrs, slog.Int("pid", e.PID))
		}
	}
	pool := func() { attrs = append(attrs, slog.Int("size", e.Size), slog.String("reason", e.Reason)) }

	switch e.Kind {
	case event.JobStarted:
		msg = "job started"
		job()
		input()
		attrs = append(attrs, slog.Duration("queue_wait", e.QueueWait))
	case event.JobFinished:
		job()
		switch e.Outcome {
		case event.Succeeded:
			msg = "job succeeded"
		case event.NotStarted:
			msg = "job not started"
		case event.Quarantined:
			level, msg = slog.LevelWarn, "job quarantined"
		default:
			level, msg = slog.LevelWarn, "job failed"
		}
		attrs = append(attrs, slog.String("outcome", e.Outcome.String()))
		if e.Outcome != event.NotStarted {
			end()
		}
		input()
	case event.JobRetried:
		level, msg = slog.LevelInfo, "job retried"
		job()
		end()
		input()
	case event.JobSkipped:
		msg = "job skipped"
		attrs = append(attrs, slog.Int64("seq", e.Seq))
		input()
	case event.WorkerStarted:
		msg = "worker started"
		worker()
	case event.WorkerBroken:
		level, msg = slog.LevelWarn, "worker broken"
		worker()
		cause := string(e.Cause)
		if cause == "" {
			cause = "unknown"
		}
		attrs = append(attrs, slog.String("cause", cause))
		if e.Seq > 0 {
			attrs = append(attrs, slog.Int64("seq", e.Seq))
		}
		if e.Err != nil {
			attrs = append(attrs, slog.String("err", e.Err.Error()))
		}
	case event.WorkerRetired:
		level, msg = slog.LevelInfo, "worker retired"
		if e.Reason == event.ReasonPoolClosed {
			level = slog.LevelDebug // every worker of every run ends so
		}
		worker()
		attrs = append(attrs, slog.String("reason", e.Reason))
	case event.PoolResized:
		level, msg = slog.LevelInfo, "pool resized"
		pool()
	case event.PoolRecreated:
		level, msg = slog.LevelWarn, "pool recreated"
		pool()
	default:
		level, msg = slog.LevelWarn, "unknown event"
		attrs = append(attrs, slog.Int("kind", int(e.Kind)))
	}
	ctx := context.Background()
	if !o.l.Enabled(ctx, level) {
		return
	}
	o.l.LogAttrs(ctx, level, msg, attrs...)
}

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
