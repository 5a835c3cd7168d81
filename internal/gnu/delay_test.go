package gnu

import (
	"testing"
	"time"
)

// TestDelayer: the next start is at least D after the one before, and a
// closed stop ends the wait with false.
func TestDelayer(t *testing.T) {
	dl := Delayer{D: 50 * time.Millisecond}
	stop := make(chan struct{})
	if !dl.Wait(stop) {
		t.Fatal("first Wait returned false")
	}
	start := time.Now()
	if !dl.Wait(stop) || time.Since(start) < 45*time.Millisecond {
		t.Fatalf("second Wait returned after %v, want 50ms", time.Since(start))
	}
	close(stop)
	if dl.Wait(stop) {
		t.Fatal("Wait with stop closed returned true")
	}
}
