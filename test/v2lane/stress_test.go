//go:build v2lane

package v2lane

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// stressReps is $V2LANE_STRESS_REPS (default 1): how many batches
// TestPodOOMStress runs, each in a pod of its own.
func stressReps() int {
	n, err := strconv.Atoi(os.Getenv("V2LANE_STRESS_REPS"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// stressJobs are the stress batch's jobs: 200 lines of "ID MIB" for burn,
// sizes drawn with seed: 5-40 MiB (3 in 4) and 40-120 MiB, and every tenth
// job 250-400 MiB touched at once, which cannot fit in 200 MiB. It returns
// the lines and the IDs of the jobs that cannot fit.
func stressJobs(seed uint64) (lines []string, big map[string]bool) {
	rnd := rand.New(rand.NewPCG(seed, 0))
	between := func(lo, hi int) int { return lo + rnd.IntN(hi-lo+1) }
	big = map[string]bool{}
	for i := 1; i <= 200; i++ {
		mib := between(5, 40)
		switch {
		case i%10 == 0:
			mib = between(250, 400)
			big[strconv.Itoa(i)] = true
		case rnd.IntN(4) == 0:
			mib = between(40, 120)
		}
		lines = append(lines, fmt.Sprintf("%d %d", i, mib))
	}
	return lines, big
}

// failedOOM matches ration's log line of a job that failed OOM-killed;
// its group is the job's number.
var failedOOM = regexp.MustCompile(`msg="job failed".* seq=(\d+) .*cause=oom`)

// TestPodOOMStress runs, in a default pod's container (200 MiB,
// memory.oom.group=1, read-only cgroupfs), ration's defaults over 200
// jobs of random sizes, 20 of which touch 250-400 MiB as fast as they can
// and cannot fit, $V2LANE_STRESS_REPS times: each time ration must
// survive, exit with the number of failed jobs, complete the 180 that
// fit, name the 20 as OOM-killed, write all 200 to the joblog, and the
// pod's memory.events must show no group kill. lane.sh runs it in a boot
// of its own with one vCPU, where the guest's time is its own (see the
// stress boot there): with two on a 2-CPU host, QEMU preempts one vCPU
// for tens of milliseconds while the other grows a job at full speed.
func TestPodOOMStress(t *testing.T) {
	bin := lane(t)
	reps := stressReps()
	// How fast a job that cannot fit grows here, alone and unlimited.
	t0 := time.Now()
	if out, err := exec.Command(filepath.Join(bin, "bench", "burn"), "-ms", "0", "-mib", "300", "1").CombinedOutput(); err != nil {
		t.Fatalf("burn: %v\n%s", err, out)
	}
	t.Logf("a job touching 300 MiB takes %.2f s alone here (%.0f MiB/s, exec included)", time.Since(t0).Seconds(), 300/time.Since(t0).Seconds())
	var failedReps int
	for rep := 1; rep <= reps; rep++ {
		ok := t.Run(fmt.Sprintf("rep%d", rep), func(t *testing.T) {
			lines, big := stressJobs(uint64(rep))
			work := t.TempDir()
			if err := os.WriteFile(filepath.Join(work, "in"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ration := filepath.Join(bin, "ration")
			// $V2LANE_STRESS_RATION, ration binaries separated by commas,
			// runs them in turn, one a repetition (an A/B of two builds in
			// one boot).
			if alt := os.Getenv("V2LANE_STRESS_RATION"); alt != "" {
				bins := strings.Split(alt, ",")
				ration = bins[(rep-1)%len(bins)]
				t.Logf("rep %d runs %s", rep, ration)
			}
			id := fmt.Sprintf("stress%d", rep)
			c := &container{Name: id, Pod: newPod(t, id, nil), Memory: 200 << 20, OOMGroup: true, Work: work,
				Args: []string{ration, "run", "--no-bar", "--debug", "--joblog", "/data/jl", "--colsep", " ", "-a", "/data/in",
					"--", filepath.Join(bin, "bench", "burn"), "-ms", "20", "-mib", "{2}", "{1}"}}
			t0 := time.Now()
			code := c.run(t, 300*timescale()*time.Second)
			wall := time.Since(t0)
			ev := events(t, c.Pod.dir)
			done := map[string]bool{}
			for _, m := range doneLine.FindAllStringSubmatch(c.Stdout.String(), -1) {
				done[m[1]] = true
			}
			recs := joblogLines(t, filepath.Join(work, "jl"))
			var missing, bigDone []string
			for i := 1; i <= 200; i++ {
				s := strconv.Itoa(i)
				switch {
				case big[s] && done[s]:
					bigDone = append(bigDone, s)
				case !big[s] && !done[s]:
					missing = append(missing, s)
				}
			}
			stderr := c.Stderr.String()
			named := map[string]bool{}
			for _, m := range failedOOM.FindAllStringSubmatch(stderr, -1) {
				named[m[1]] = true
			}
			stops := strings.Count(stderr, "memory guard: stopped")
			t.Logf("rep %d: exit %d, %d done, joblog %d records, %d failed named OOM-killed, %d guard stops, wall %.1f s, memory.events oom %d, oom_kill %d, oom_group_kill %d",
				rep, code, len(done), len(recs), len(named), stops, wall.Seconds(), ev["oom"], ev["oom_kill"], ev["oom_group_kill"])
			t.Logf("expected: exit %d (the jobs that cannot fit), %d done, joblog 200, oom_group_kill 0", len(big), 200-len(big))
			if code != len(big) {
				t.Errorf("exit %d; want %d (one a failed job; 137 is ration killed with the group)", code, len(big))
			}
			if len(missing) > 0 {
				t.Errorf("jobs that fit did not complete: %v", missing)
			}
			if len(bigDone) > 0 {
				t.Errorf("jobs of 250 MiB or more completed in 200 MiB: %v", bigDone)
			}
			if !maps.Equal(named, big) {
				t.Errorf("jobs failed as OOM-killed: %v; want %v", slices.Sorted(maps.Keys(named)), slices.Sorted(maps.Keys(big)))
			}
			if len(recs) != 200 {
				t.Errorf("joblog has %d records; want 200", len(recs))
			}
			if ev["oom_group_kill"] != 0 {
				t.Errorf("oom_group_kill %d; want 0", ev["oom_group_kill"])
			}
			for _, line := range strings.Split(stderr, "\n") {
				if strings.Contains(line, "memory guard ended") {
					t.Logf("ration: %s", line)
				}
			}
			if t.Failed() {
				lines := strings.Split(stderr, "\n")
				t.Logf("ration's last log lines:\n%s", strings.Join(lines[max(len(lines)-80, 0):], "\n"))
				// The whole log, for the host: $V2LANE_OUT is the lane's
				// output directory (bin/v2lane/out there).
				if out := os.Getenv("V2LANE_OUT"); out != "" {
					name := filepath.Join(out, fmt.Sprintf("stress-rep%d.stderr", rep))
					if err := os.WriteFile(name, []byte(stderr), 0o644); err == nil {
						t.Logf("ration's whole log: %s", name)
					}
				}
			}
		})
		if !ok {
			failedReps++
		}
	}
	t.Logf("%d repetitions, %d failed", reps, failedReps)
}
