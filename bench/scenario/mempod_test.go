package main

import (
	"os/exec"
	"testing"
	"time"
)

func TestBestFixed(t *testing.T) {
	fixed := func(name string, wall time.Duration, done int) memPodRun {
		return memPodRun{c: memPodContender{name: name, args: []string{"x"}, fixed: true}, r: result{Wall: wall}, done: done}
	}
	ration := memPodRun{c: memPodContender{name: "ration", args: []string{"x"}}, r: result{Wall: time.Second}, done: 40}
	timedOut := fixed("xargs -P 1", time.Second, 40)
	timedOut.r.TimedOut = true
	for _, tt := range []struct {
		name string
		runs []memPodRun
		want time.Duration
	}{
		{"fastest complete fixed setting", []memPodRun{ration, fixed("-P 2", 14*time.Second, 40), fixed("-P 4", 9*time.Second, 31), fixed("-P 8", 12*time.Second, 40)}, 12 * time.Second},
		{"none complete: fastest fixed", []memPodRun{ration, fixed("-P 4", 9*time.Second, 31), fixed("-P 8", 5*time.Second, 12)}, 5 * time.Second},
		{"a timed-out run is no reference", []memPodRun{timedOut, fixed("-P 2", 14*time.Second, 40)}, 14 * time.Second},
		{"no fixed setting", []memPodRun{ration}, 0},
	} {
		if got := bestFixed(tt.runs, 40); got != tt.want {
			t.Errorf("%s: bestFixed = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestMemPodProgram checks that the job is valid Python and prints what
// the harness counts.
func TestMemPodProgram(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	out, err := exec.Command(py, "-c", memPodProgram, "7").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if id, ok := doneID(string(out)); !ok || id != 7 {
		t.Errorf("output %q: want \"done 7\"", out)
	}
}

func TestUnknownScenario(t *testing.T) {
	if err := mainErr(true, "analyzer,mempood", "out", "bin", ""); err == nil {
		t.Error("-only mempood: no error")
	}
}
