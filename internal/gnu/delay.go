package gnu

import "time"

// Delayer spaces job starts by D (--delay).
type Delayer struct {
	D    time.Duration
	last time.Time
}

// Wait sleeps until D after the previous call, and returns false when the
// stop is closed meanwhile.
func (dl *Delayer) Wait(stop <-chan struct{}) bool {
	if dl.D <= 0 {
		return true
	}
	if !dl.last.IsZero() {
		if rest := time.Until(dl.last.Add(dl.D)); rest > 0 {
			t := time.NewTimer(rest)
			defer t.Stop()
			select {
			case <-t.C:
			case <-stop:
				return false
			}
		}
	}
	dl.last = time.Now()
	return true
}
