package memory

import (
	"testing"
	"time"
)

// TestChooseStop: which job the guard stops once the memory it cannot
// reclaim is past its line, given what is already on its way back.
func TestChooseStop(t *testing.T) {
	const self, mib = 1, int64(1 << 20)
	now := time.Unix(1000, 0)
	job := func(pgrp int, rss int64) guardProc { return guardProc{ppid: self, pgrp: pgrp, rss: rss * mib} }
	exiting := func(pgrp int, rss int64) guardProc {
		p := job(pgrp, rss)
		p.exiting = true
		return p
	}
	for _, tc := range []struct {
		name    string
		used    int64 // MiB; the line is at 184
		procs   []guardProc
		stopped map[int]time.Time
		want    int // 0: none
	}{
		{"the largest", 190, []guardProc{job(10, 40), job(11, 120), job(12, 20)}, nil, 11},
		{"below the line: none", 180, []guardProc{job(10, 170)}, nil, 0},
		{"a grandchild's memory counts for its group", 190, []guardProc{job(10, 60), {ppid: 99, pgrp: 10, rss: 80 * mib}, job(11, 100)}, nil, 10},
		{"not ration's own group", 190, []guardProc{{ppid: 0, pgrp: self, rss: 150 * mib}, job(11, 30)}, nil, 11},
		{"an exiting job brings it under the line", 190, []guardProc{exiting(10, 90), job(11, 90)}, nil, 0},
		{"a stopped job within the grace brings it under the line", 190, []guardProc{job(10, 90), job(11, 90)}, map[int]time.Time{10: now.Add(-50 * time.Millisecond)}, 0},
		// Three jobs grow together: one stopped is not enough, and
		// waiting for its memory lets the other two reach the limit.
		{"the rest alone past the line: a second stop", 196, []guardProc{exiting(10, 10), job(11, 90), job(12, 95)}, nil, 12},
		{"a stopped job is not stopped again", 196, []guardProc{job(10, 10), job(11, 90), job(12, 95)}, map[int]time.Time{10: now.Add(-50 * time.Millisecond)}, 12},
		{"past the grace a stopped job frees nothing more", 190, []guardProc{job(10, 90), job(11, 90)}, map[int]time.Time{10: now.Add(-time.Second)}, 11},
		{"no resident memory: none", 190, []guardProc{job(10, 0)}, nil, 0},
	} {
		got, ok := chooseStop(now, tc.used*mib, 184*mib, tc.procs, self, tc.stopped)
		if !ok {
			got = 0
		}
		if got != tc.want {
			t.Errorf("%s: chooseStop = %d, %v; want %d", tc.name, got, ok, tc.want)
		}
	}
}
