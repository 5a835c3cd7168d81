package memory

import (
	"testing"
	"time"
)

// TestGuardTimerPoke: a Poke ends the Sleep under way, or else the next
// one, however long it was to be; without one the timer keeps its time.
func TestGuardTimerPoke(t *testing.T) {
	timer, err := newGuardTimer()
	if err != nil {
		t.Fatal(err)
	}
	defer timer.Close()

	timer.Poke() // before the Sleep
	if err := timer.Sleep(time.Hour); err != nil {
		t.Fatal(err)
	}

	slept := make(chan error)
	go func() { slept <- timer.Sleep(time.Hour) }()
	select {
	case err := <-slept:
		t.Fatalf("Sleep(1h) returned before any Poke: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	timer.Poke() // during the Sleep
	if err := <-slept; err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if err := timer.Sleep(20 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("Sleep(20ms) after the Pokes returned after %v", d)
	}
}
