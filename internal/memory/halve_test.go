package memory

import (
	"testing"
	"time"
)

func TestHalveAfterOOM(t *testing.T) {
	for _, tt := range []struct{ cur, size, ceiling int }{
		{8, 4, 7}, {4, 2, 3}, {3, 1, 2}, {2, 1, 1}, {1, 1, 0}, {0, 1, 0},
	} {
		if size, ceil := HalveAfterOOM(tt.cur); size != tt.size || ceil != tt.ceiling {
			t.Errorf("HalveAfterOOM(%d) = %d, %d; want %d, %d", tt.cur, size, ceil, tt.size, tt.ceiling)
		}
	}
}

func TestOOMHalves(t *testing.T) {
	halved := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var never time.Time
	for _, tt := range []struct {
		name        string
		alone       bool
		started     time.Time
		lastHalving time.Time
		want        bool
	}{
		{"beside others, never halved", false, halved, never, true},
		{"started after the halving", false, halved.Add(time.Millisecond), halved, true},
		{"started at the halving", false, halved, halved, true},
		{"started before the halving: already answered", false, halved.Add(-time.Millisecond), halved, false},
		{"start unknown", false, never, halved, true},
		{"alone", true, halved.Add(time.Second), halved, false},
		{"alone, never halved", true, never, never, false},
	} {
		if got := OOMHalves(tt.alone, tt.started, tt.lastHalving); got != tt.want {
			t.Errorf("%s: OOMHalves = %v, want %v", tt.name, got, tt.want)
		}
	}
}
