package gnu

import (
	"testing"
	"time"
)

// TestRuntimesMedian: the median is of the latest medianWindow runtimes,
// the lower middle one of an even count, 0 before any.
func TestRuntimesMedian(t *testing.T) {
	var rt Runtimes
	if got := rt.Median(); got != 0 {
		t.Fatalf("Median of none = %v, want 0", got)
	}
	for _, d := range []time.Duration{3, 1, 2, 4} {
		rt.Add(d)
	}
	if got := rt.Median(); got != 2 {
		t.Errorf("Median of 3 1 2 4 = %v, want 2", got)
	}
	// A window of large runtimes pushes the small ones out.
	for range medianWindow {
		rt.Add(time.Hour)
	}
	if got := rt.Median(); got != time.Hour {
		t.Errorf("Median after a window of hours = %v, want 1h", got)
	}
}
