package memory

import (
	"slices"
	"strings"
	"testing"
)

func TestOOMRetryDecide(t *testing.T) {
	for _, tt := range []struct {
		name    string
		max     int
		k       OOMKill
		requeue bool
		reason  string
	}{
		{"first kill beside others: re-queued", 0, OOMKill{Kills: 1, Others: 7}, true, "beside 7 other jobs (kill 1 of at most 3)"},
		{"second kill beside one other: re-queued", 0, OOMKill{Kills: 2, Others: 1}, true, "beside 1 other job (kill 2 of at most 3)"},
		{"third kill: the bound", 0, OOMKill{Kills: 3, Others: 1}, false, "OOM-killed 3 times (the bound is 3)"},
		{"killed alone on the first attempt: it cannot fit", 0, OOMKill{Kills: 1, Others: 0}, false, "while running alone (kill 1)"},
		{"killed alone after re-queues", 0, OOMKill{Kills: 2}, false, "while running alone (kill 2)"},
		{"a bound of 1", 1, OOMKill{Kills: 1, Others: 3}, false, "the bound is 1"},
		{"a bound of 5", 5, OOMKill{Kills: 4, Others: 3}, true, "kill 4 of at most 5"},
		{"kills not counted: taken as the first", 0, OOMKill{Others: 0}, false, "kill 1"},
	} {
		v := OOMRetry{MaxKills: tt.max}.Decide(tt.k)
		if v.Requeue != tt.requeue || !strings.Contains(v.Reason, tt.reason) {
			t.Errorf("%s: %+v, want requeue %v, reason ~%q", tt.name, v, tt.requeue, tt.reason)
		}
	}
	if (New(Config{OOMAttempts: 2}).OOMRetry()) != (OOMRetry{MaxKills: 2}) {
		t.Error("Gate.OOMRetry does not carry Config.OOMAttempts")
	}
}

func TestOOMRetryReady(t *testing.T) {
	var p OOMRetry
	for _, tt := range []struct {
		others, size int
		want         bool
	}{
		// Halved from 8 to 4: 7 others still run, then they end one by one.
		{7, 4, false}, {4, 4, false}, {3, 4, true}, {0, 4, true},
		// Halved to 1: only alone.
		{1, 1, false}, {0, 1, true},
		{0, 0, true}, {1, 0, false}, // a size below 1 counts as 1
	} {
		if got := p.Ready(tt.others, tt.size); got != tt.want {
			t.Errorf("Ready(others %d, size %d) = %v, want %v", tt.others, tt.size, got, tt.want)
		}
	}
}

func TestOOMRetryBelow(t *testing.T) {
	for _, tt := range []struct{ others, want int }{
		{0, 1}, {1, 1}, {2, 1}, {3, 2}, {4, 2}, {7, 4}, {-1, 1},
	} {
		if got := (OOMRetry{}).Below(tt.others); got != tt.want {
			t.Errorf("Below(%d) = %d, want %d", tt.others, got, tt.want)
		}
	}
}

func TestAttribute(t *testing.T) {
	rose := func(e End) End { e.OOMBefore, e.OOMAfter = 3, 4; return e }
	for _, tt := range []struct {
		name   string
		e      End
		others []int
		oom    bool
		cands  []int
		reason string
	}{
		{"SIGKILL, counter rose", rose(End{ExitCode: -1, Signal: 9, GroupGone: true}), nil, true, []int{5}, "SIGKILL while the memory cgroup's oom_kill rose by 1 (3 -> 4)"},
		{"shell reports 137", rose(End{ExitCode: 137, GroupGone: true}), nil, true, []int{5}, "exit 137 (a shell reporting its child's SIGKILL)"},
		{"a wrapper exits 1", rose(End{ExitCode: 1, GroupGone: true}), nil, true, []int{5}, "exit 1 while"},
		{"another signal", rose(End{ExitCode: -1, Signal: 6, GroupGone: true}), nil, true, []int{5}, "signal 6"},
		{"candidates named", rose(End{ExitCode: 137, GroupGone: true}), []int{9, 2, 5}, true, []int{2, 5, 9}, "jobs running then: 2, 5, 9"},
		{"counter did not rise", End{ExitCode: 137, GroupGone: true, OOMBefore: 4, OOMAfter: 4}, nil, false, nil, "did not rise"},
		{"succeeded", rose(End{GroupGone: true}), nil, false, nil, "succeeded"},
		{"stopped by the run (timeout SIGKILL)", rose(End{ExitCode: -1, Signal: 9, Stopped: true, GroupGone: true}), nil, false, nil, "stopped"},
		{"group still alive", rose(End{ExitCode: 137}), nil, false, nil, "still alive"},
		{"counter unknown before", End{ExitCode: 137, GroupGone: true, OOMBefore: -1, OOMAfter: 4}, nil, false, nil, "unknown"},
		{"counter unknown after", End{ExitCode: 137, GroupGone: true, OOMBefore: 4, OOMAfter: -1}, nil, false, nil, "unknown"},
		{"counter went backwards (cgroup recreated)", End{ExitCode: 137, GroupGone: true, OOMBefore: 4, OOMAfter: 0}, nil, false, nil, "did not rise"},
	} {
		a := Attribute(5, tt.e, tt.others)
		if a.OOM != tt.oom || !slices.Equal(a.Candidates, tt.cands) || !strings.Contains(a.Reason, tt.reason) {
			t.Errorf("%s: %+v, want OOM %v, candidates %v, reason ~%q", tt.name, a, tt.oom, tt.cands, tt.reason)
		}
	}
}

func TestTracker(t *testing.T) {
	var tr Tracker
	tr.Started(1, 0)
	tr.Started(2, 0)
	tr.Started(3, 1) // started after a first kill
	tr.Started(4, -1)
	// Counter at 2: jobs 2 and 3 were running when it rose from 1 to 2,
	// job 4's start is unknown.
	a := tr.Ended(1, 2, End{ExitCode: 137, GroupGone: true})
	if !a.OOM || !slices.Equal(a.Candidates, []int{1, 2, 3}) || a.Rise != 2 {
		t.Errorf("job 1: %+v", a)
	}
	tr.Started(5, 2) // after the rise: no candidate
	a = tr.Ended(2, 2, End{ExitCode: -1, Signal: 9, GroupGone: true})
	if !a.OOM || !slices.Equal(a.Candidates, []int{2, 3}) {
		t.Errorf("job 2: %+v", a)
	}
	if a := tr.Ended(5, 2, End{ExitCode: 137, GroupGone: true}); a.OOM {
		t.Errorf("job 5 started after the rise: %+v", a)
	}
	if a := tr.Ended(99, 2, End{ExitCode: 137, GroupGone: true}); a.OOM || !strings.Contains(a.Reason, "unknown") {
		t.Errorf("never started: %+v", a)
	}
	if a := tr.Ended(3, 2, End{GroupGone: true}); a.OOM {
		t.Errorf("job 3 succeeded: %+v", a)
	}
}

func TestOOMRetryDecideFirstFree(t *testing.T) {
	rule := OOMRetry{MaxKills: 3}
	for _, tc := range []struct {
		k           OOMKill
		wantRequeue bool
		wantReason  string
	}{
		{OOMKill{Kills: 1, Others: 0}, true, "first OOM kill: re-queued once (OOM-killed while running alone (kill 1): it does not fit in the memory limit)"},
		{OOMKill{Kills: 2, Others: 0}, false, "OOM-killed while running alone (kill 2): it does not fit in the memory limit"},
		{OOMKill{Kills: 1, Others: 2}, true, "OOM-killed beside 2 other jobs (kill 1 of at most 3): re-queued until fewer jobs run"},
		{OOMKill{Kills: 3, Others: 1}, false, "OOM-killed 3 times (the bound is 3), the last time beside 1 other job"},
	} {
		v := rule.DecideFirstFree(tc.k, "re-queued")
		if v.Requeue != tc.wantRequeue || v.Reason != tc.wantReason {
			t.Errorf("DecideFirstFree(%+v) = %+v; want requeue %v, %q", tc.k, v, tc.wantRequeue, tc.wantReason)
		}
	}
}
