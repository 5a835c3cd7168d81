package progress

import (
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// Widths of the bar itself, the [###...] part, in characters.
const (
	barMax = 20 // on a wide terminal, and off a terminal
	barMin = 10 // narrower is dropped: the percentage says the same
)

// fallbackColumns is the width of a terminal that reports none (a serial
// console reports 0 columns).
const fallbackColumns = 80

// columns returns the width of the bar's terminal: Options.Width, else
// the writer's, read now (a window resized since the last redraw gets
// lines that fit it, with no SIGWINCH handler to install and remove);
// 0, no limit, off a terminal and for a writer that is not a file.
func (b *Bar) columns() int {
	if !b.terminal {
		return 0
	}
	if b.width > 0 {
		return b.width
	}
	f, ok := b.w.(*os.File)
	if !ok {
		return 0
	}
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		return w
	}
	return fallbackColumns
}

// part is one field of the bar's line. When the line does not fit, the
// parts of the highest rank are left out first.
type part struct {
	text string
	rank int
}

// The ranks of the parts, most important first.
const (
	rankCounts = iota // done/total and percentage, or done
	rankFailed
	rankEnded // stopped, not started: how an interrupted run ended
	rankETA
	rankBar
	rankRunning
	rankElapsed
	rankRate
	rankSkipped
)

// line formats the state to fit in columns-1 characters (0: no limit),
// so that it never reaches the last column, where a terminal wraps or
// leaves the cursor: with a known total a bar, percentage and ETA;
// without, counts and rate only. final is the line Finish writes: a run
// that stopped jobs has no ETA.
func (b *Bar) line(now time.Time, columns int, final bool) string {
	done, succeeded, failed, skipped := b.done.Load(), b.succeeded.Load(), b.failed.Load(), b.skipped.Load()
	stopped, notStarted, active := b.jobsStopped.Load(), b.notStarted.Load(), max(b.active.Load(), 0)
	el := now.Sub(b.start)
	rate := 0.0
	if el > 0 {
		rate = float64(done) / el.Seconds()
	}
	total := b.total.Load()
	if total >= 0 {
		total -= skipped
	}
	var parts []part
	add := func(rank int, format string, args ...any) {
		parts = append(parts, part{text: fmt.Sprintf(format, args...), rank: rank})
	}
	frac := -1.0 // no bar
	if total < 0 {
		// As the summary says it: done are the jobs that succeeded.
		add(rankCounts, "%d done", succeeded)
	} else {
		frac = 1.0
		if total > 0 {
			frac = min(float64(done)/float64(total), 1)
		}
		add(rankBar, "")
		add(rankCounts, "%d/%d %3.0f%%", done, total, frac*100)
	}
	add(rankFailed, "%d failed", failed)
	if stopped > 0 {
		add(rankEnded, "%d stopped", stopped)
	}
	if notStarted > 0 {
		add(rankEnded, "%d not started", notStarted)
	}
	add(rankRunning, "%d running", active)
	add(rankRate, "%s/s", fmtRate(rate))
	if skipped > 0 {
		add(rankSkipped, "%d skipped", skipped)
	}
	add(rankElapsed, "%s", fmtDur(el))
	if total >= 0 && !(final && stopped+notStarted > 0) {
		eta := "?"
		switch {
		case done >= total:
			eta = "0s"
		case rate > 0:
			eta = fmtDur(time.Duration(float64(total-done) / rate * float64(time.Second)))
		}
		add(rankETA, "ETA %s", eta)
	}
	return fit(parts, frac, columns-1)
}

// fit joins the parts that fit in limit characters (no limit when limit
// < 0), adding them by rank while they fit, and widens the bar (at frac
// done; none when negative) into what is left, up to barMax. When not
// even the counts fit, the "ration: " prefix goes, then the line is cut.
func fit(parts []part, frac float64, limit int) string {
	keep := make([]bool, len(parts))
	barWidth := barMax
	if limit >= 0 {
		barWidth = barMin
	}
	render := func(prefix string, barWidth int) string {
		var sb strings.Builder
		sb.WriteString(prefix)
		sep := ""
		for i, p := range parts {
			switch {
			case !keep[i]:
			case p.rank == rankBar:
				fill := int(frac * float64(barWidth))
				sb.WriteString("[" + strings.Repeat("#", fill) + strings.Repeat(".", barWidth-fill) + "] ")
			default:
				sb.WriteString(sep + p.text)
				// The counts and what follows them are one clause:
				// "3/10 30%, 1 failed".
				sep = ", "
			}
		}
		return sb.String()
	}
	const prefix = "ration: "
	for rank := rankCounts; rank <= rankSkipped; rank++ {
		for i, p := range parts {
			if p.rank != rank || frac < 0 && p.rank == rankBar {
				continue
			}
			keep[i] = true
			if limit >= 0 && len(render(prefix, barWidth)) > limit && rank != rankCounts {
				keep[i] = false
			}
		}
	}
	line := render(prefix, barWidth)
	if limit < 0 {
		return line
	}
	if extra := limit - len(line); extra > 0 && barWidth < barMax {
		line = render(prefix, min(barMax, barWidth+extra))
	}
	if len(line) > limit {
		line = render("", barWidth)
	}
	if len(line) > limit {
		line = line[:max(limit, 0)]
	}
	return line
}

func fmtRate(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.1f", r)
}

// fmtDur writes d in whole seconds (tenths under ten seconds).
func fmtDur(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
