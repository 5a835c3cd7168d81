package gnu

import (
	"slices"
	"sync"
	"time"
)

// medianWindow is how many of the latest runtimes the median of
// --timeout P% is taken over.
const medianWindow = 999

// Runtimes keeps the runtimes of the latest succeeded jobs for --timeout
// P%, whose limit is P% of their median, as in GNU parallel (which also
// counts only the jobs that succeeded).
type Runtimes struct {
	mu     sync.Mutex
	ring   []time.Duration
	next   int
	median time.Duration
}

// Add records the runtime of a succeeded job.
func (rt *Runtimes) Add(d time.Duration) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.ring) < medianWindow {
		rt.ring = append(rt.ring, d)
	} else {
		rt.ring[rt.next] = d
		rt.next = (rt.next + 1) % medianWindow
	}
	s := slices.Clone(rt.ring)
	slices.Sort(s)
	rt.median = s[(len(s)-1)/2]
}

// Median returns the median, 0 before any job succeeded.
func (rt *Runtimes) Median() time.Duration {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.median
}
