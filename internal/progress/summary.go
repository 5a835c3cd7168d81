package progress

import (
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner"
)

// Columns returns the width of the terminal w writes to (an *os.File, or
// a writer with the Fd of one, such as the bar's), read now; 0 when w is
// not a terminal.
func Columns(w io.Writer) int {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return 0
	}
	c, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	if c <= 0 {
		return fallbackColumns
	}
	return c
}

// SummaryLine returns the summary of s (and more, what the run adds after
// it, such as the workers' counts) for a terminal columns wide, after a
// prefix of prefixLen characters: the counts and the wall time always,
// then what fits in the rest of the line, most important first: the
// number of jobs, what bound them (memory, more), the peak RSS, and last
// the reason for the number of jobs, which is long. No "0 skipped". The
// counts are s.String()'s, in its words, so that the line reads as the
// one off a terminal (which a file, a pipe and the JSON log keep whole).
// With columns <= 0 it is s.String() and more, whole.
func SummaryLine(s runner.Summary, more string, prefixLen, columns int) string {
	if columns <= 0 {
		line := s.String()
		if more != "" {
			line += "; " + more
		}
		return line
	}
	jobs := fmt.Sprintf("%d jobs", s.Jobs)
	if s.Jobs == 1 {
		jobs = "1 job"
	}
	var parts []part // rank: the order in which they are added while they fit
	add := func(rank int, text string) { parts = append(parts, part{text: text, rank: rank}) }
	add(0, summaryCounts(s))
	add(1, "; "+jobs)
	if s.JobsReason != "" {
		add(5, " ("+s.JobsReason+")")
	}
	if s.PeakRSSMax > 0 {
		add(4, fmt.Sprintf("; peak RSS max %s, p95 %s", limits.FormatSize(s.PeakRSSMax), limits.FormatSize(s.PeakRSSP95)))
	}
	if s.MemoryBound != "" {
		add(2, "; "+s.MemoryBound)
	}
	if more != "" {
		add(3, "; "+more)
	}
	limit := columns - 1 - prefixLen // never the last column: see Bar.line
	keep := make([]bool, len(parts))
	render := func() string {
		var sb strings.Builder
		for i, p := range parts {
			if keep[i] {
				sb.WriteString(p.text)
			}
		}
		return sb.String()
	}
	for rank := 0; rank <= 5; rank++ {
		for i, p := range parts {
			if p.rank != rank {
				continue
			}
			keep[i] = true
			if rank > 0 && len(render()) > limit {
				keep[i] = false
			}
		}
	}
	return render()
}

// summaryCounts is the part of s.String() before the number of jobs,
// without "0 skipped".
func summaryCounts(s runner.Summary) string {
	line := fmt.Sprintf("%d done, %d failed", s.Succeeded, s.Failed)
	if s.Quarantined > 0 {
		line += fmt.Sprintf(" (%d quarantined)", s.Quarantined)
	}
	if s.OOMRetried > 0 {
		line += fmt.Sprintf(", %d retried after an OOM kill", s.OOMRetried)
	}
	if s.Killed > 0 {
		line += fmt.Sprintf(", %d stopped", s.Killed)
	}
	if s.NotStarted > 0 || !s.InputDone {
		line += fmt.Sprintf(", %d not started", s.NotStarted)
		if !s.InputDone {
			line += " (and the unread input)"
		}
	}
	if s.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	return line + " in " + s.Wall.Round(time.Millisecond).String()
}
