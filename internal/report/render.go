package report

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Options configure WriteSVG and WriteHTML.
type Options struct {
	// Title heads the output; "" means "ration report".
	Title string
	// CPUs draws the CPU budget as a line on the concurrency chart; 0
	// omits it (a joblog does not record the budget it ran under).
	CPUs float64
	// Slowest is how many of the longest attempts the HTML lists; 0 means
	// 20.
	Slowest int
	// MaxFailed bounds the failed jobs the HTML lists; 0 means 1000.
	MaxFailed int
}

func (o Options) title() string {
	if o.Title == "" {
		return "ration report"
	}
	return o.Title
}

// Colours of the bars; the legend names them.
const (
	colorOK      = "#4c78a8" // succeeded
	colorFailed  = "#d62728" // failed for good
	colorRetried = "#f28e2b" // failed, then retried
	colorBudget  = "#2ca02c"
)

// Geometry of the SVG, in pixels.
const (
	svgWidth   = 1200
	marginL    = 64
	marginR    = 24
	plotW      = svgWidth - marginL - marginR
	headerH    = 64
	concH      = 140
	axisH      = 28
	legendH    = 28
	maxGanttH  = 600
	minRowH    = 2.0
	maxRowH    = 18.0
	fontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif"
)

// esc escapes s for XML text and attribute values. Invalid UTF-8 and
// characters XML cannot carry become U+FFFD; quotes, tabs and newlines
// become character references, so a command can never break out of its
// attribute or element.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

// clipRunes cuts s to n runes, marking the cut. It reads no further than
// the cut: a command may be megabytes long.
func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	runes := 0
	for i := range s {
		if runes == n-1 {
			if _, size := utf8.DecodeRuneInString(s[i:]); i+size < len(s) { // more than n runes
				return s[:i] + "…"
			}
			return s
		}
		runes++
	}
	return s
}

// fmtDur writes a duration the way people read run times.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// px rounds a coordinate to 0.01 px, enough for any screen, short in text.
func px(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// niceSteps are the tick spacings of the time axis, ascending.
var niceSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// tickStep picks the smallest round step that puts at most 10 ticks on span.
func tickStep(span time.Duration) time.Duration {
	for _, s := range niceSteps {
		if span/s <= 10 {
			return s
		}
	}
	day := 24 * time.Hour
	return (span/(10*day) + 1) * day
}

// WriteSVG writes r as a standalone SVG image.
func (r *Run) WriteSVG(w io.Writer, o Options) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, `<?xml version="1.0" encoding="UTF-8"?>`)
	if err := r.svg(bw, o, true, nil); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write svg: %w", err)
	}
	return nil
}

// svg draws the image, reading the jobs again (see Jobs) and passing each
// to each, if not nil. standalone adds the title and totals, which the HTML
// page shows as text instead.
func (r *Run) svg(w *bufio.Writer, o Options, standalone bool, each func(Job)) error {
	t := r.Totals()
	rowH := min(maxRowH, max(minRowH, float64(maxGanttH)/float64(r.Rows)))
	ganttH := rowH * float64(r.Rows)
	top := 8.0
	if standalone {
		top = headerH
	}
	ganttTop := top + legendH
	concTop := ganttTop + ganttH + axisH + 16
	height := concTop + concH + axisH

	span := r.End.Sub(r.Start)
	if span <= 0 {
		span = time.Millisecond // all jobs instantaneous: any scale draws them
	}
	x := func(at time.Time) float64 { return marginL + float64(at.Sub(r.Start))/float64(span)*plotW }

	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%s" viewBox="0 0 %d %s" font-family="%s" font-size="12">`+"\n",
		svgWidth, px(height), svgWidth, px(height), fontFamily)
	fmt.Fprintf(w, "<title>%s</title>\n", esc(o.title()))
	fmt.Fprintf(w, `<rect x="0" y="0" width="%d" height="%s" fill="#ffffff"/>`+"\n", svgWidth, px(height))
	if standalone {
		fmt.Fprintf(w, `<text x="%d" y="24" font-size="18" font-weight="bold">%s</text>`+"\n", marginL, esc(o.title()))
		fmt.Fprintf(w, `<text x="%d" y="46" fill="#444">%s</text>`+"\n", marginL, esc(totalsLine(r, t)))
	}

	// Legend.
	lx := float64(marginL)
	for _, item := range []struct{ color, label string }{
		{colorOK, "succeeded"}, {colorFailed, "failed"}, {colorRetried, "failed, retried"}, {"", "retry attempt (outlined)"},
	} {
		if item.color == "" {
			fmt.Fprintf(w, `<rect x="%s" y="%s" width="12" height="12" fill="%s" stroke="#111" stroke-width="1.5"/>`, px(lx), px(top+4), colorOK)
		} else {
			fmt.Fprintf(w, `<rect x="%s" y="%s" width="12" height="12" fill="%s"/>`, px(lx), px(top+4), item.color)
		}
		fmt.Fprintf(w, `<text x="%s" y="%s">%s</text>`+"\n", px(lx+16), px(top+14), item.label)
		lx += 24 + 7*float64(len(item.label))
	}

	// Timeline.
	fmt.Fprintf(w, `<g class="timeline">`+"\n")
	fmt.Fprintf(w, `<rect x="%d" y="%s" width="%d" height="%s" fill="#f6f6f6"/>`+"\n", marginL, px(ganttTop), plotW, px(ganttH))
	labelEvery := int(math.Ceil(14 / rowH))
	for row := 0; row < r.Rows; row += labelEvery {
		fmt.Fprintf(w, `<text x="%d" y="%s" text-anchor="end" font-size="%s" fill="#666">%d</text>`+"\n",
			marginL-6, px(ganttTop+float64(row)*rowH+rowH/2+4), px(min(11, max(9, rowH))), row+1)
	}
	fmt.Fprintf(w, `<text x="14" y="%s" transform="rotate(-90 14 %s)" text-anchor="middle" fill="#444">row (slot)</text>`+"\n",
		px(ganttTop+ganttH/2), px(ganttTop+ganttH/2))
	gap := 0.0
	if rowH >= 6 {
		gap = 1
	}
	for j, err := range r.Jobs() {
		if err != nil {
			return err
		}
		if each != nil {
			each(j)
		}
		class, fill := "job ok", colorOK
		switch {
		case !j.Succeeded() && j.Retried:
			class, fill = "job failed retried", colorRetried
		case !j.Succeeded():
			class, fill = "job failed", colorFailed
		}
		stroke := ""
		if j.Attempt > 1 {
			class += " retry"
			stroke = ` stroke="#111" stroke-width="1.5"`
		}
		x0 := x(j.Start)
		wd := max(x(j.End())-x0, 0.8) // an instantaneous job stays visible
		fmt.Fprintf(w, `<rect class="%s" x="%s" y="%s" width="%s" height="%s" fill="%s"%s data-seq="%d" data-exit="%d" data-signal="%d" data-attempt="%d" data-line="%d"><title>%s</title></rect>`+"\n",
			class, px(x0), px(ganttTop+float64(j.Row)*rowH), px(wd), px(rowH-gap), fill, stroke,
			j.Seq, j.Exitval, j.Signal, j.Attempt, j.Line, esc(barTitle(j, r.Start)))
	}
	fmt.Fprintln(w, `</g>`)
	r.timeAxis(w, x, ganttTop+ganttH, span)

	// Concurrency.
	yMax := float64(r.Rows)
	if o.CPUs > 0 {
		yMax = max(yMax, o.CPUs)
	}
	yMax = math.Ceil(yMax * 1.1)
	y := func(v float64) float64 { return concTop + concH - v/yMax*concH }
	fmt.Fprintf(w, `<g class="concurrency">`+"\n")
	fmt.Fprintf(w, `<text x="%d" y="%s" fill="#444">running jobs over time (peak %d, mean %s)</text>`+"\n",
		marginL, px(concTop-6), t.PeakConcurrency, fmtF(math.Round(t.MeanConcurrency*100)/100))
	fmt.Fprintf(w, `<rect x="%d" y="%s" width="%d" height="%d" fill="#f6f6f6"/>`+"\n", marginL, px(concTop), plotW, concH)
	yStep := math.Max(1, math.Ceil(yMax/5))
	for v := 0.0; v <= yMax; v += yStep {
		fmt.Fprintf(w, `<line x1="%d" x2="%d" y1="%s" y2="%s" stroke="#dddddd"/><text x="%d" y="%s" text-anchor="end" fill="#666">%s</text>`+"\n",
			marginL, marginL+plotW, px(y(v)), px(y(v)), marginL-6, px(y(v)+4), fmtF(v))
	}
	fmt.Fprintf(w, `<path class="running" d="M%s %s`, px(x(r.Start)), px(y(0)))
	for at, n := range r.steps() {
		fmt.Fprintf(w, "H%sV%s", px(x(time.UnixMilli(at))), px(y(float64(n))))
	}
	fmt.Fprintf(w, `H%sV%sZ" fill="%s" fill-opacity="0.35" stroke="%s" stroke-width="1"/>`+"\n", px(x(r.End)), px(y(0)), colorOK, colorOK)
	if o.CPUs > 0 {
		fmt.Fprintf(w, `<line class="budget" x1="%d" x2="%d" y1="%s" y2="%s" stroke="%s" stroke-width="2" stroke-dasharray="6 4"/>`+"\n",
			marginL, marginL+plotW, px(y(o.CPUs)), px(y(o.CPUs)), colorBudget)
		fmt.Fprintf(w, `<text x="%d" y="%s" text-anchor="end" fill="%s" stroke="#ffffff" stroke-width="4" paint-order="stroke" font-weight="bold">CPU budget %s</text>`+"\n",
			marginL+plotW-4, px(y(o.CPUs)-5), colorBudget, fmtF(o.CPUs))
	}
	fmt.Fprintln(w, `</g>`)
	r.timeAxis(w, x, concTop+concH, span)
	fmt.Fprintln(w, `</svg>`)
	return nil
}

// timeAxis draws ticks and labels of time since the run's start below y0.
func (r *Run) timeAxis(w *bufio.Writer, x func(time.Time) float64, y0 float64, span time.Duration) {
	step := tickStep(span)
	fmt.Fprintf(w, `<g class="axis"><line x1="%d" x2="%d" y1="%s" y2="%s" stroke="#888"/>`, marginL, marginL+plotW, px(y0), px(y0))
	for d := time.Duration(0); ; d += step {
		xx := x(r.Start.Add(d))
		fmt.Fprintf(w, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#888"/><text x="%s" y="%s" text-anchor="middle" fill="#444">%s</text>`,
			px(xx), px(xx), px(y0), px(y0+5), px(xx), px(y0+18), esc(d.String()))
		if span-d < step { // not d+step > span: a span of the largest Duration would overflow it
			break
		}
	}
	fmt.Fprintln(w, `</g>`)
}

func barTitle(j Job, start time.Time) string {
	status := "ok"
	if !j.Succeeded() {
		status = "exit " + strconv.Itoa(j.Exitval)
		if j.Signal != 0 {
			status += ", signal " + strconv.Itoa(j.Signal)
		}
	}
	s := fmt.Sprintf("#%d %s, %s at +%s", j.Seq, status, fmtDur(j.Runtime), fmtDur(j.Start.Sub(start)))
	if j.Attempt > 1 {
		s += fmt.Sprintf(", attempt %d", j.Attempt)
	}
	return s + "\n" + clipRunes(j.Command, 300)
}

func totalsLine(r *Run, t Totals) string {
	s := fmt.Sprintf("%d jobs, %d succeeded, %d failed", t.Jobs, t.Succeeded, t.Failed)
	if t.Retried > 0 {
		s += fmt.Sprintf(", %d retried (%d attempts)", t.Retried, t.Attempts)
	}
	return s + fmt.Sprintf(" · wall %s, job time %s · median %s, p95 %s, max %s · started %s",
		fmtDur(t.Wall), fmtDur(t.JobTime), fmtDur(t.Median), fmtDur(t.P95), fmtDur(t.Max),
		r.Start.UTC().Format("2006-01-02 15:04:05 MST"))
}

// htmlStyle is the page's only style sheet, inline.
const htmlStyle = `body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
table{border-collapse:collapse}th,td{padding:3px 10px;border-bottom:1px solid #e2e2e2;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
td.cmd{font-family:ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-all;max-width:720px}
.chart{overflow-x:auto}.muted{color:#666}.bad{color:#b00}`

// WriteHTML writes r as a self-contained HTML page. The markup is also
// well-formed XML (XHTML syntax in an HTML5 document), so tools can parse
// it with an XML parser.
func (r *Run) WriteHTML(w io.Writer, o Options) error {
	if o.Slowest <= 0 {
		o.Slowest = 20
	}
	if o.MaxFailed <= 0 {
		o.MaxFailed = 1000
	}
	t := r.Totals()
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n",
		esc(o.title()), htmlStyle)
	fmt.Fprintf(bw, "<h1>%s</h1>\n<p class=\"muted\">started %s, ended %s</p>\n", esc(o.title()),
		r.Start.UTC().Format("2006-01-02 15:04:05.000 MST"), r.End.UTC().Format("2006-01-02 15:04:05.000 MST"))

	fmt.Fprintln(bw, `<h2>Totals</h2>`)
	fmt.Fprintln(bw, `<table class="totals">`)
	row := func(k, v string) { fmt.Fprintf(bw, "<tr><th>%s</th><td class=\"n\">%s</td></tr>\n", k, esc(v)) }
	row("jobs", strconv.Itoa(t.Jobs))
	row("succeeded", strconv.Itoa(t.Succeeded))
	row("failed", strconv.Itoa(t.Failed))
	row("retried jobs", strconv.Itoa(t.Retried))
	row("attempts (joblog lines)", strconv.Itoa(t.Attempts))
	row("wall time", fmtDur(t.Wall))
	row("job time (sum)", fmtDur(t.JobTime))
	row("peak concurrency", strconv.Itoa(t.PeakConcurrency))
	row("mean concurrency", fmtF(math.Round(t.MeanConcurrency*100)/100))
	if o.CPUs > 0 {
		row("CPU budget", fmtF(o.CPUs))
	}
	row("median / p95 / max run time", fmtDur(t.Median)+" / "+fmtDur(t.P95)+" / "+fmtDur(t.Max))
	if r.Skipped > 0 {
		row("malformed lines skipped", strconv.Itoa(r.Skipped))
	}
	fmt.Fprintln(bw, `</table>`)

	fmt.Fprintln(bw, `<h2>Timeline</h2>`)
	fmt.Fprintln(bw, `<p class="muted">One bar per joblog line; rows are assigned greedily (each job takes the lowest row free at its start, allowing for the log's rounding of times), so the number of rows is the peak concurrency and never more than the slots that ran; the tables give each job's row as its slot. Hover a bar for its command.</p>`)
	fmt.Fprintln(bw, `<div class="chart">`)
	tables := r.newTables(o)
	if err := r.svg(bw, o, false, tables.add); err != nil {
		return err
	}
	fmt.Fprintln(bw, `</div>`)

	fmt.Fprintf(bw, "<h2>Failed jobs (%d)</h2>\n", t.Failed)
	if t.Failed == 0 {
		fmt.Fprintln(bw, `<p>None.</p>`)
	} else {
		if t.Failed > o.MaxFailed {
			fmt.Fprintf(bw, "<p class=\"muted\">The first %d of %d are listed.</p>\n", o.MaxFailed, t.Failed)
		}
		jobTable(bw, "failed", tables.failed, r.Start)
	}
	fmt.Fprintf(bw, "<h2>Slowest %d attempts</h2>\n", len(tables.slowest))
	jobTable(bw, "slowest", tables.slowest, r.Start)

	if len(r.Warnings) > 0 {
		fmt.Fprintf(bw, "<h2>Skipped lines (%d)</h2>\n<ul>\n", r.Skipped)
		for _, s := range r.Warnings {
			fmt.Fprintf(bw, "<li>%s</li>\n", esc(s))
		}
		fmt.Fprintln(bw, `</ul>`)
	}
	fmt.Fprintln(bw, "</body>\n</html>")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

// tables collects the jobs that the HTML tables list while the timeline
// draws every job: the first MaxFailed that failed for good, in file order,
// and the Slowest attempts.
type tables struct {
	failed, slowest []Job
	maxFailed       int
	slowAt          map[int]int // Job.Line -> place in slowest
}

func (r *Run) newTables(o Options) *tables {
	t := &tables{maxFailed: o.MaxFailed, slowAt: map[int]int{}}
	for k, i := range r.slowest(o.Slowest) {
		t.slowAt[int(i)+1] = k
	}
	t.slowest = make([]Job, len(t.slowAt))
	return t
}

// add keeps j if a table lists it, its command cut to what the table
// shows.
func (t *tables) add(j Job) {
	k, slow := t.slowAt[j.Line]
	failed := !j.Retried && !j.Succeeded() && len(t.failed) < t.maxFailed
	if !slow && !failed {
		return
	}
	j.Command = strings.Clone(clipRunes(j.Command, maxTableCommand))
	j.Host = strings.Clone(j.Host)
	if slow {
		t.slowest[k] = j
	}
	if failed {
		t.failed = append(t.failed, j)
	}
}

// maxTableCommand is how many runes of a command the tables show.
const maxTableCommand = 2000

// jobTable lists jobs. Its slot column is the job's timeline row, 1-based:
// a joblog does not record slots, but the rows are a valid assignment of
// the jobs to as many slots as ran at once, so the column finds a job's bar.
func jobTable(w *bufio.Writer, class string, jobs []Job, start time.Time) {
	fmt.Fprintf(w, "<table class=\"%s\">\n<tr><th>seq</th><th>attempt</th><th>exit</th><th>signal</th><th>started</th><th>run time</th><th>slot</th><th>host</th><th>command</th></tr>\n", class)
	for _, j := range jobs {
		cls := ""
		if !j.Succeeded() {
			cls = ` class="bad"`
		}
		fmt.Fprintf(w, "<tr%s data-seq=\"%d\"><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">+%s</td><td class=\"n\">%s</td><td class=\"n\">%d</td><td>%s</td><td class=\"cmd\">%s</td></tr>\n",
			cls, j.Seq, j.Seq, j.Attempt, j.Exitval, j.Signal, esc(fmtDur(j.Start.Sub(start))), esc(fmtDur(j.Runtime)), j.Row+1, esc(j.Host), esc(clipRunes(j.Command, maxTableCommand)))
	}
	fmt.Fprintln(w, `</table>`)
}
