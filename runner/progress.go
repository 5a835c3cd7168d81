package runner

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ration-run/ration/runner/event"
)

// Progress is an event.Observer that draws a one-line progress bar:
// done/total with a bar, failures, rate and ETA when the total is known,
// counts and rate only when it is not. It redraws at most every
// ProgressEvery, in place (carriage return), and never holds its lock
// while writing, so a slow terminal only slows the job that drew.
type Progress struct {
	w     io.Writer
	total int64 // < 0: unknown
	start time.Time

	mu                            sync.Mutex
	done, failed, skipped, active int64
	last                          time.Time
	drawing                       bool
}

// ProgressEvery is the least time between two redraws of a Progress.
const ProgressEvery = 200 * time.Millisecond

// NewProgress returns a Progress drawing on w. total is the number of jobs
// when known in advance, or a negative number.
func NewProgress(w io.Writer, total int64) *Progress {
	return &Progress{w: w, total: total, start: time.Now()}
}

// Observe counts the event and redraws when the last redraw is old enough.
func (p *Progress) Observe(e event.Event) {
	p.mu.Lock()
	switch e.Kind {
	case event.JobStarted:
		if e.Attempt <= 1 {
			p.active++
		}
	case event.JobFinished:
		if e.Outcome != event.NotStarted {
			p.active--
		}
		p.done++
		if e.Outcome != event.Succeeded {
			p.failed++
		}
	case event.JobSkipped:
		p.skipped++
	}
	now := time.Now()
	if p.drawing || now.Sub(p.last) < ProgressEvery {
		p.mu.Unlock()
		return
	}
	p.last, p.drawing = now, true
	line := p.lineLocked(now)
	p.mu.Unlock()
	_, _ = io.WriteString(p.w, "\r"+line+"\x1b[K")
	p.mu.Lock()
	p.drawing = false
	p.mu.Unlock()
}

// Finish draws the final state and ends the line.
func (p *Progress) Finish() {
	p.mu.Lock()
	line := p.lineLocked(time.Now())
	p.mu.Unlock()
	_, _ = io.WriteString(p.w, "\r"+line+"\x1b[K\n")
}

func (p *Progress) lineLocked(now time.Time) string {
	el := now.Sub(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.done) / el
	}
	tail := fmt.Sprintf("%d failed, %d running, %.1f/s", p.failed, max(p.active, 0), rate)
	if p.skipped > 0 {
		tail += fmt.Sprintf(", %d skipped", p.skipped)
	}
	total := p.total - p.skipped
	if p.total < 0 || total <= 0 {
		return fmt.Sprintf("ration: %d done, %s", p.done, tail)
	}
	const width = 24
	frac := min(float64(p.done)/float64(total), 1)
	fill := int(frac * width)
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '.'
		if i < fill {
			bar[i] = '#'
		}
	}
	eta := "?"
	if rate > 0 {
		eta = time.Duration(float64(max(total-p.done, 0)) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("ration: [%s] %d/%d %3.0f%%, %s, ETA %s", bar, p.done, total, frac*100, tail, eta)
}
