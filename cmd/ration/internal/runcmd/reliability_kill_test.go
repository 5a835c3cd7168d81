//go:build linux

package runcmd

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/joblog"
)

// killPoints is how many random kill points TestReliabKillAnywhere tries:
// RATION_KILL_POINTS, default 8 (each costs about a second; the issue's
// acceptance run uses 200).
func killPoints(t *testing.T) int {
	if s := os.Getenv("RATION_KILL_POINTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("RATION_KILL_POINTS=%q: want a positive number", s)
		}
		return n
	}
	return 8
}

// recordedSeqs reads the joblog a killed run left, ignoring a torn last
// line (the record being written at the kill, which does not count).
func recordedSeqs(t *testing.T, path string) map[int64]bool {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[int64]bool{}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[int64]bool{}
	for e, err := range joblog.Entries(f) {
		if errors.Is(err, joblog.ErrTornTail) {
			continue
		}
		if err != nil {
			t.Fatalf("joblog after the kill: %v", err)
		}
		m[e.Seq] = true
	}
	return m
}

// TestReliabKillAnywhere: SIGKILL ration at a random moment of a run of 500
// short jobs that each append their input to a file, then --resume. Every
// input appears at least once; an input appears twice only if its job was
// running at the kill (not recorded; at most -j of them per kill); jobs
// are gone within 1 s of ration's death; no recorded job runs again.
func TestReliabKillAnywhere(t *testing.T) {
	t.Parallel()
	const n, jobs = 500, 4
	ins := inputs(n)
	runArgs := func(jl, out string, resume bool) []string {
		a := []string{"run", "-j", strconv.Itoa(jobs), "--joblog", jl}
		if resume {
			a = append(a, "--resume")
		}
		a = append(append(a, "--"), appendJob(out)...)
		return append(append(a, ":::"), ins...)
	}
	// How long a whole run takes here, for the range of kill moments.
	base := t.TempDir()
	full := rcmd{dir: base, args: runArgs(filepath.Join(base, "jl"), filepath.Join(base, "out"), false)}.run(t)
	if full.code != 0 {
		t.Fatalf("a whole run: exit %d: %s", full.code, full.stderr)
	}
	points := killPoints(t)
	var midRun, dupsTotal, dupsMax int
	for p := range points {
		dir := t.TempDir()
		jl, out := filepath.Join(dir, "jl"), filepath.Join(dir, "out")
		at := time.Duration(rand.Int64N(int64(full.wall) * 11 / 10))
		cmd, stdout, stderr := rcmd{dir: dir, args: runArgs(jl, out, false)}.start(t)
		time.Sleep(at)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		waitRation(t, cmd, stdout, stderr, 30*time.Second)
		if left := waitNoProcs(out, time.Second); len(left) > 0 {
			t.Fatalf("kill point %d (%s): jobs %v still running 1 s after ration died", p, at, left)
		}
		recorded := recordedSeqs(t, jl)
		if len(recorded) > 0 && len(recorded) < n {
			midRun++
		}
		r := rcmd{dir: dir, args: runArgs(jl, out, true)}.run(t)
		if r.code != 0 {
			t.Fatalf("kill point %d (%s): --resume: exit %d: %s", p, at, r.code, r.stderr)
		}
		counts := lineCounts(t, out)
		dups := 0
		for i, in := range ins {
			seq := int64(i + 1)
			switch c := counts[in]; {
			case c == 0:
				t.Errorf("kill point %d (%s): input %s never ran", p, at, in)
			case recorded[seq] && c != 1:
				t.Errorf("kill point %d (%s): job %d was recorded, yet ran %d times", p, at, seq, c)
			case c == 2:
				dups++
			case c > 2:
				t.Errorf("kill point %d (%s): input %s ran %d times", p, at, in, c)
			}
		}
		if dups > jobs {
			t.Errorf("kill point %d (%s): %d inputs ran twice, more than -j %d", p, at, dups, jobs)
		}
		if got := recordedSeqs(t, jl); len(got) != n {
			t.Errorf("kill point %d (%s): the joblog records %d jobs after --resume, want %d", p, at, len(got), n)
		}
		dupsTotal += dups
		dupsMax = max(dupsMax, dups)
		if t.Failed() {
			return
		}
	}
	t.Logf("%d kill points (%d in mid-run), a whole run %s: every input ran, no recorded job ran again; inputs run twice (running at the kill): %d in all, at most %d per kill (-j %d)",
		points, midRun, full.wall.Round(time.Millisecond), dupsTotal, dupsMax, jobs)
}
