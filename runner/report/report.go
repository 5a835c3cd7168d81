// Package report draws a joblog (ration's or GNU parallel's) as a
// self-contained HTML page or SVG image: a timeline of the jobs, the
// concurrency over time against the CPU budget, the slowest and the failed
// jobs, and totals. The output references nothing outside itself: no
// scripts, no fonts, no style sheets, no images.
//
// # Timeline rows
//
// A joblog does not record which slot ran a job, so the timeline assigns
// rows itself: jobs are taken in order of start time, and each goes to the
// lowest-numbered row that is free at its start (a row is free once its
// previous job has ended, at or before the start). With ration's own slots
// this gives the same picture as long as jobs start in slot order; the
// number of rows always equals the peak concurrency, and the HTML tables
// show each job's row in their slot column.
//
// # Resolution
//
// A joblog keeps times to the millisecond (ration truncates the start and
// rounds the run time; other writers round differently), so a job that
// started right after another ended can appear to overlap it by up to two
// units of the log's resolution. Counted naively, `-j 2` then shows a peak
// of 3. Read infers the resolution (the coarsest of 1 s, 100 ms, 10 ms and
// 1 ms that divides every start and run time) and treats an attempt as
// ending two resolutions before its recorded end (never before its start)
// when it decides what ran at once. The peak concurrency and the rows are
// therefore never more than the slots that ran; an overlap shorter than
// two resolutions, which the log cannot tell from rounding, is not counted.
// Bars are still drawn at their recorded times.
//
// # Attempts
//
// A line whose Seq and Command already appeared earlier in the log is a
// later attempt of the same job: a --resume-failed run (GNU parallel's or
// ration's) appends the re-run to the log. A job's outcome is that of its
// last attempt. (Retries within one run, --retries, leave one line per job
// in both tools, for the last attempt, so they are not visible here.) Concatenated logs of different runs reuse Seq numbers
// with other commands; those stay separate jobs.
package report

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ration-run/ration/runner/joblog"
)

// ErrNoEntries is returned by Read for a joblog without a single job line.
var ErrNoEntries = errors.New("report: no job entries in the joblog")

// maxWarnings bounds the warnings Read keeps; a binary file fed by mistake
// would otherwise make one per line.
const maxWarnings = 100

// Job is one line of the joblog: one attempt of a job.
type Job struct {
	joblog.Entry
	// Line is the 1-based position of the entry among the job lines.
	Line int
	// Row is the 0-based timeline row the attempt is drawn in.
	Row int
	// Attempt is 1 for the first line of a (Seq, Command) pair, 2 for the
	// second, and so on.
	Attempt int
	// Retried reports whether a later line of the same job exists, so this
	// attempt was not the last.
	Retried bool
}

// End is when the attempt ended.
func (j Job) End() time.Time { return j.Start.Add(j.Runtime) }

// Run is a parsed joblog.
type Run struct {
	// Jobs are the job lines in file order.
	Jobs []Job
	// Rows is the number of timeline rows, the peak concurrency.
	Rows int
	// Resolution is the precision of the log's times as Read inferred it
	// (1 ms for ration's and GNU parallel's logs); see the package
	// documentation.
	Resolution time.Duration
	// Start is the earliest start and End the latest end of any job.
	Start, End time.Time
	// Warnings name the malformed lines that were skipped (at most 100;
	// Skipped counts them all).
	Warnings []string
	Skipped  int
}

// Read parses a joblog. Malformed lines become Warnings and are skipped;
// an I/O error is returned as is, and a log without job lines gives
// ErrNoEntries.
func Read(r io.Reader) (*Run, error) {
	run := &Run{}
	for e, err := range joblog.Entries(r) {
		if err != nil {
			if !errors.Is(err, joblog.ErrMalformed) {
				return nil, fmt.Errorf("report: %w", err)
			}
			run.Skipped++
			if len(run.Warnings) < maxWarnings {
				run.Warnings = append(run.Warnings, err.Error())
			}
			continue
		}
		run.Jobs = append(run.Jobs, Job{Entry: e, Line: len(run.Jobs) + 1})
	}
	if len(run.Jobs) == 0 {
		if run.Skipped > 0 {
			return nil, fmt.Errorf("%w (%d malformed lines, first: %s)", ErrNoEntries, run.Skipped, run.Warnings[0])
		}
		return nil, ErrNoEntries
	}
	run.markAttempts()
	run.Resolution = resolution(run.Jobs)
	run.assignRows()
	return run, nil
}

type jobKey struct {
	seq int64
	cmd string
}

func (r *Run) markAttempts() {
	last := make(map[jobKey]int, len(r.Jobs)) // key -> index of its latest line
	for i := range r.Jobs {
		k := jobKey{r.Jobs[i].Seq, r.Jobs[i].Command}
		r.Jobs[i].Attempt = 1
		if p, ok := last[k]; ok {
			r.Jobs[i].Attempt = r.Jobs[p].Attempt + 1
			r.Jobs[p].Retried = true
		}
		last[k] = i
	}
}

// resolution returns the coarsest of 1 s, 100 ms, 10 ms and 1 ms that
// divides every start and run time of jobs.
func resolution(jobs []Job) time.Duration {
	for _, q := range []time.Duration{time.Second, 100 * time.Millisecond, 10 * time.Millisecond} {
		if !slices.ContainsFunc(jobs, func(j Job) bool {
			return j.Start.UnixMilli()%q.Milliseconds() != 0 || j.Runtime%q != 0
		}) {
			return q
		}
	}
	return time.Millisecond
}

// busyUntil is when j stops counting as running: its recorded end less two
// resolutions, which is how far rounding can stretch one job over the
// start of the next, but not before its start.
func (r *Run) busyUntil(j *Job) time.Time {
	end := j.End().Add(-2 * r.Resolution)
	if end.Before(j.Start) {
		return j.Start
	}
	return end
}

// assignRows gives each attempt the lowest row free at its start. An
// attempt that counts as instantaneous (see busyUntil) needs no row of its
// own: when every row is busy it shares the one that frees first.
func (r *Run) assignRows() {
	order := make([]int, len(r.Jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return r.Jobs[a].Start.Compare(r.Jobs[b].Start) })
	var rowEnd []time.Time // until when each row is busy
	r.Start, r.End = r.Jobs[order[0]].Start, r.Jobs[order[0]].End()
	for _, i := range order {
		j := &r.Jobs[i]
		busy := r.busyUntil(j)
		row := slices.IndexFunc(rowEnd, func(end time.Time) bool { return !end.After(j.Start) })
		switch {
		case row >= 0:
			rowEnd[row] = busy
		case busy.Equal(j.Start) && len(rowEnd) > 0:
			row = 0
			for k := range rowEnd {
				if rowEnd[k].Before(rowEnd[row]) {
					row = k
				}
			}
		default:
			row = len(rowEnd)
			rowEnd = append(rowEnd, busy)
		}
		j.Row = row
		if j.End().After(r.End) {
			r.End = j.End()
		}
	}
	r.Rows = len(rowEnd)
}

// Totals summarizes a run.
type Totals struct {
	Jobs      int // distinct jobs (Seq, Command)
	Attempts  int // job lines
	Succeeded int // jobs whose last attempt succeeded
	Failed    int // jobs whose last attempt failed
	Retried   int // jobs with more than one attempt
	// Wall is from the first start to the last end; JobTime the sum of the
	// attempts' run times.
	Wall, JobTime time.Duration
	// PeakConcurrency is the most attempts running at once;
	// MeanConcurrency is JobTime / Wall.
	PeakConcurrency int
	MeanConcurrency float64
	// Median, P95 and Max are over the attempts' run times.
	Median, P95, Max time.Duration
}

// Totals computes the totals of r.
func (r *Run) Totals() Totals {
	t := Totals{Attempts: len(r.Jobs), PeakConcurrency: r.Rows, Wall: r.End.Sub(r.Start)}
	runtimes := make([]time.Duration, 0, len(r.Jobs))
	for _, j := range r.Jobs {
		t.JobTime += j.Runtime
		runtimes = append(runtimes, j.Runtime)
		if j.Attempt == 1 {
			t.Jobs++
		}
		if j.Attempt == 2 {
			t.Retried++
		}
		if !j.Retried {
			if j.Succeeded() {
				t.Succeeded++
			} else {
				t.Failed++
			}
		}
	}
	slices.Sort(runtimes)
	t.Median = runtimes[len(runtimes)/2]
	t.P95 = runtimes[min(len(runtimes)-1, len(runtimes)*95/100)]
	t.Max = runtimes[len(runtimes)-1]
	if t.Wall > 0 {
		t.MeanConcurrency = float64(t.JobTime) / float64(t.Wall)
	}
	return t
}

// Slowest returns the n attempts that ran longest, longest first.
func (r *Run) Slowest(n int) []Job {
	jobs := slices.Clone(r.Jobs)
	slices.SortStableFunc(jobs, func(a, b Job) int { return cmp.Compare(b.Runtime, a.Runtime) })
	return jobs[:min(n, len(jobs))]
}

// Failed returns the failed attempts that were not retried, the jobs that
// failed for good, in file order.
func (r *Run) Failed() []Job {
	var out []Job
	for _, j := range r.Jobs {
		if !j.Retried && !j.Succeeded() {
			out = append(out, j)
		}
	}
	return out
}

// Step is one point of the concurrency curve: from At on, Running attempts
// run.
type Step struct {
	At      time.Time
	Running int
}

// Concurrency returns the number of running attempts over time, one Step
// per change. As in the row assignment, an attempt stops counting two
// resolutions before its recorded end, so one that ends when (or, within
// the log's rounding, just after) another starts is not counted twice, and
// the peak equals Rows.
func (r *Run) Concurrency() []Step {
	type edge struct {
		at    time.Time
		delta int
	}
	edges := make([]edge, 0, 2*len(r.Jobs))
	for _, j := range r.Jobs {
		if end := r.busyUntil(&j); end.After(j.Start) {
			edges = append(edges, edge{j.Start, 1}, edge{end, -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.delta, b.delta) // ends first
	})
	var steps []Step
	n := 0
	for _, e := range edges {
		n += e.delta
		if len(steps) > 0 && steps[len(steps)-1].At.Equal(e.at) {
			steps[len(steps)-1].Running = n
			continue
		}
		steps = append(steps, Step{e.at, n})
	}
	return steps
}
