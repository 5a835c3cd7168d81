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
// in both tools, for the last attempt, so they are not visible here.)
// Concatenated logs of different runs reuse Seq numbers with other
// commands; those stay separate jobs. Read tells commands apart by a
// 64-bit hash, so two commands of one Seq would merge only if their hashes
// collided.
//
// # Memory
//
// A joblog can have millions of lines, so Read keeps none of them: per
// line it keeps 32 bytes (start, run time, row, attempt, outcome), and
// while it reads 20 more (the Seq and a hash of the command, to find
// attempts); the totals and the concurrency curve take up to 12 more while
// they are computed. WriteSVG and WriteHTML read the joblog a second time
// for the commands, one line at a time, and keep only the jobs their
// tables list (at most Slowest + MaxFailed, commands cut to 2,000 runes).
// `ration report` on a million-line joblog thus peaks at 170-185 MB of
// resident memory (bench/scripts/reportmem.sh), where keeping every line
// took 700 MB (TestReportMemoryBounded checks 400,000 lines under 128 MB). The joblog
// must be readable twice (an io.ReaderAt); a pipe has to be copied to a
// file first, as `ration report -` does.
//
// It belongs to the command line (ration report): of this module it imports
// runner/joblog only, and no library package may import it.
package report

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"math"
	"slices"
	"time"

	"github.com/ration-run/ration/runner/joblog"
)

// ErrNoEntries is returned by Read for a joblog without a single job line.
var ErrNoEntries = errors.New("no job entries in the joblog")

// ErrChanged is returned by the writers when the joblog no longer holds
// the lines Read found in it (it was truncated or rewritten; lines
// appended after Read are not read).
var ErrChanged = errors.New("the joblog changed while the report was written")

// maxWarnings bounds the warnings Read keeps; a binary file fed by mistake
// would otherwise make one per line.
const maxWarnings = 100

// maxWarningLen bounds the bytes of one warning: a malformed line quotes
// its bad field, which may be megabytes long.
const maxWarningLen = 300

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

	src    io.ReaderAt // the joblog, read again by Jobs
	size   int64       // the bytes of src that Read read
	lines  []line      // one per job line, in file order
	totals Totals
}

// line is what a Run keeps of one job line: what places its bar and
// enters the totals, not the line itself (Jobs reads that again).
type line struct {
	start   int64 // milliseconds since the epoch
	runtime int64 // milliseconds
	row     int32
	attempt int32
	failed  bool
	retried bool
}

func (l *line) end() int64 { return l.start + l.runtime }

// Read parses a joblog. Malformed lines, and lines too long to read
// (joblog.ErrLineTooLong), become Warnings and are skipped; an I/O error
// is returned as is, and a log without job lines gives ErrNoEntries. The
// Run reads src again, from its start, for Jobs, WriteSVG and WriteHTML,
// up to where Read stopped: lines appended meanwhile are not part of the
// report.
func Read(src io.ReaderAt) (*Run, error) {
	run := &Run{src: src}
	in := io.NewSectionReader(src, 0, math.MaxInt64)
	seed := maphash.MakeSeed()
	var keys []jobKey // per line, until the attempts are marked
	for e, err := range joblog.Entries(in) {
		if err != nil {
			if !skippable(err) {
				return nil, err
			}
			run.Skipped++
			if len(run.Warnings) < maxWarnings {
				run.Warnings = append(run.Warnings, clipBytes(err.Error(), maxWarningLen))
			}
			continue
		}
		run.lines = append(run.lines, line{start: e.Start.UnixMilli(), runtime: e.Runtime.Milliseconds(), failed: !e.Succeeded()})
		keys = append(keys, jobKey{int32(e.Seq), maphash.String(seed, e.Command)})
	}
	if len(run.lines) == 0 {
		if run.Skipped > 0 {
			return nil, fmt.Errorf("%w (%s, first: %s)", ErrNoEntries, count(run.Skipped, "malformed line"), run.Warnings[0])
		}
		return nil, ErrNoEntries
	}
	run.size, _ = in.Seek(0, io.SeekCurrent) // a SectionReader's Seek does no I/O and cannot fail here
	run.markAttempts(keys)
	keys = nil
	run.Resolution = resolution(run.lines)
	run.assignRows()
	run.totals = run.computeTotals()
	return run, nil
}

// skippable reports whether err is about one line that a report can do
// without. A line too long to read is one: --resume must not skip it (it
// may record a finished job), but a picture can.
func skippable(err error) bool {
	return errors.Is(err, joblog.ErrMalformed) || errors.Is(err, joblog.ErrLineTooLong)
}

// count returns "1 thing" or "n things".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// clipBytes cuts s to at most n bytes at a rune boundary, marking the cut.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xc0 == 0x80 { // not a rune's first byte
		n--
	}
	return s[:n] + "…"
}

// Len returns the number of job lines.
func (r *Run) Len() int { return len(r.lines) }

// Jobs yields the job lines in file order. It reads them again from the
// joblog given to Read; if that fails, or the joblog no longer holds the
// lines Read found (ErrChanged), it yields the error and stops.
func (r *Run) Jobs() iter.Seq2[Job, error] {
	return func(yield func(Job, error) bool) {
		i := 0
		for e, err := range joblog.Entries(io.NewSectionReader(r.src, 0, r.size)) {
			if skippable(err) {
				continue // Read skipped it too
			}
			if err != nil {
				yield(Job{}, fmt.Errorf("read the joblog again: %w", err))
				return
			}
			if i == len(r.lines) || e.Start.UnixMilli() != r.lines[i].start || e.Runtime.Milliseconds() != r.lines[i].runtime {
				yield(Job{}, ErrChanged)
				return
			}
			l := &r.lines[i]
			i++
			if !yield(Job{Entry: e, Line: i, Row: int(l.row), Attempt: int(l.attempt), Retried: l.retried}, nil) {
				return
			}
		}
		if i != len(r.lines) {
			yield(Job{}, ErrChanged)
		}
	}
}

// jobKey tells the attempts of one job (one Seq and Command) from other
// jobs; the command is kept as its hash.
type jobKey struct {
	seq int32 // joblog.MaxSeq fits
	cmd uint64
}

// markAttempts numbers the attempts of each job, keys[i] being line i's,
// and marks all but the last as retried. It sorts line numbers rather than
// using a map: 4 bytes a line.
func (r *Run) markAttempts(keys []jobKey) {
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		ka, kb := keys[a], keys[b]
		return cmp.Or(cmp.Compare(ka.seq, kb.seq), cmp.Compare(ka.cmd, kb.cmd), cmp.Compare(a, b))
	})
	for n, i := range order {
		r.lines[i].attempt = 1
		if n > 0 && keys[order[n-1]] == keys[i] {
			prev := &r.lines[order[n-1]]
			r.lines[i].attempt = prev.attempt + 1
			prev.retried = true
		}
	}
}

// resolution returns the coarsest of 1 s, 100 ms, 10 ms and 1 ms (in
// milliseconds) that divides every start and run time of lines.
func resolution(lines []line) time.Duration {
	for _, q := range []int64{1000, 100, 10} {
		if !slices.ContainsFunc(lines, func(l line) bool { return l.start%q != 0 || l.runtime%q != 0 }) {
			return time.Duration(q) * time.Millisecond
		}
	}
	return time.Millisecond
}

// busyUntil is when l stops counting as running, in milliseconds: its
// recorded end less two resolutions, which is how far rounding can
// stretch one job over the start of the next, but not before its start.
func (r *Run) busyUntil(l *line) int64 {
	return max(l.end()-2*r.Resolution.Milliseconds(), l.start)
}

// byStart returns the line numbers in order of start time, file order
// among equal starts.
func (r *Run) byStart() []int32 {
	order := make([]int32, len(r.lines))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(r.lines[a].start, r.lines[b].start), cmp.Compare(a, b))
	})
	return order
}

// assignRows gives each attempt the lowest row free at its start. An
// attempt that counts as instantaneous (see busyUntil) needs no row of its
// own: when every row is busy it shares the one that frees first.
func (r *Run) assignRows() {
	var rowEnd []int64 // until when each row is busy
	first := r.lines[0].start
	last := r.lines[0].end()
	for _, i := range r.byStart() {
		l := &r.lines[i]
		first, last = min(first, l.start), max(last, l.end())
		busy := r.busyUntil(l)
		row := slices.IndexFunc(rowEnd, func(end int64) bool { return end <= l.start })
		switch {
		case row >= 0:
			rowEnd[row] = busy
		case busy == l.start && len(rowEnd) > 0:
			row = 0
			for k := range rowEnd {
				if rowEnd[k] < rowEnd[row] {
					row = k
				}
			}
		default:
			row = len(rowEnd)
			rowEnd = append(rowEnd, busy)
		}
		l.row = int32(row)
	}
	r.Rows = len(rowEnd)
	r.Start, r.End = time.UnixMilli(first), time.UnixMilli(last)
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

// Totals returns the totals of r.
func (r *Run) Totals() Totals { return r.totals }

func (r *Run) computeTotals() Totals {
	t := Totals{Attempts: len(r.lines), PeakConcurrency: r.Rows, Wall: r.End.Sub(r.Start)}
	runtimes := make([]int64, 0, len(r.lines))
	var jobTime int64
	for _, l := range r.lines {
		jobTime += l.runtime
		runtimes = append(runtimes, l.runtime)
		if l.attempt == 1 {
			t.Jobs++
		}
		if l.attempt == 2 {
			t.Retried++
		}
		if !l.retried {
			if l.failed {
				t.Failed++
			} else {
				t.Succeeded++
			}
		}
	}
	slices.Sort(runtimes)
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	t.JobTime = ms(jobTime)
	t.Median = ms(runtimes[len(runtimes)/2])
	t.P95 = ms(runtimes[min(len(runtimes)-1, len(runtimes)*95/100)])
	t.Max = ms(runtimes[len(runtimes)-1])
	if t.Wall > 0 {
		t.MeanConcurrency = float64(t.JobTime) / float64(t.Wall)
	}
	return t
}

// slowest returns the line numbers of the n attempts that ran longest,
// longest first, in file order among equal run times.
func (r *Run) slowest(n int) []int32 {
	order := make([]int32, len(r.lines))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(r.lines[b].runtime, r.lines[a].runtime), cmp.Compare(a, b))
	})
	return slices.Clip(order[:min(n, len(order))])
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
	var steps []Step
	for at, n := range r.steps() {
		steps = append(steps, Step{time.UnixMilli(at), n})
	}
	return steps
}

// steps yields the concurrency curve as Concurrency returns it, the times
// in milliseconds, without holding it: it has up to two steps a line.
func (r *Run) steps() iter.Seq2[int64, int] {
	return func(yield func(int64, int) bool) {
		var starts, ends []int64 // of the attempts that count as running a while
		for i := range r.lines {
			if l := &r.lines[i]; r.busyUntil(l) > l.start {
				starts = append(starts, l.start)
				ends = append(ends, r.busyUntil(l))
			}
		}
		slices.Sort(starts)
		slices.Sort(ends)
		n, s, e := 0, 0, 0
		for s < len(starts) || e < len(ends) {
			at := ends[e] // every start has a later end, so ends run out last
			if s < len(starts) {
				at = min(at, starts[s])
			}
			for ; e < len(ends) && ends[e] == at; e++ {
				n--
			}
			for ; s < len(starts) && starts[s] == at; s++ {
				n++
			}
			if !yield(at, n) {
				return
			}
		}
	}
}
