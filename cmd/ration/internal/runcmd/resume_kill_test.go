//go:build linux

package runcmd

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/joblog"
)

var resumeKills = flag.Int("resume-kills", 0, "TestResumeKillAnywhere: SIGKILL ration at `N` random moments (0: skip the test; about 0.3 s a kill)")

// TestResumeKillAnywhere: ration is SIGKILLed at -resume-kills random
// moments of a run over a file set that changes between the runs (jobs
// move half of the files they process; files are added and removed),
// each kill followed by --resume, then one resume to the end. No input
// runs again once its record was written, none is left out, no two
// records share a number or an input. Slow: behind a flag, see
// docs/running.md for the numbers.
func TestResumeKillAnywhere(t *testing.T) {
	if *resumeKills == 0 {
		t.Skip("run with -resume-kills N")
	}
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 33))
	next := 0
	live := map[string]bool{} // files that must be run once: every one added and not removed
	add := func(n int) {
		for range n {
			sub := "s"
			if next%2 == 0 {
				sub = "m"
			}
			name := fmt.Sprintf("data/%s/%03d/f%05d.txt", sub, next%97, next)
			fileSet(t, dir, name)
			live[name] = true
			next++
		}
	}
	add(4000)
	cmd := `echo "$RUN {}" >> ran.log; sleep 0.0$((RANDOM % 4)); case {} in data/m/*) mv {} {}.done;; esac`
	args := []string{"run", "-q", "--resume", "-j4", "--joblog", "j.log", "--files", "data/**/*.txt", "--shell", cmd}
	jl := filepath.Join(dir, "j.log")
	recordedIn := map[string]int{} // input -> the run whose end found its record
	noteRecords := func(run int) {
		f, err := os.Open(jl)
		if err != nil {
			return
		}
		defer f.Close()
		for e, err := range joblog.Entries(f) {
			if err != nil {
				continue // a torn last record: the next run cuts it off
			}
			if _, ok := recordedIn[e.Command]; !ok {
				recordedIn[e.Command] = run
			}
		}
	}
	start := time.Now()
	locked := 0 // runs that found the joblog still locked by the killed one
	for run := 1; run <= *resumeKills; run++ {
		c, out, errb := rcmd{dir: dir, env: []string{"RUN=" + strconv.Itoa(run)}, args: args}.start(t)
		time.Sleep(time.Duration(rnd.Int64N(int64(300 * time.Millisecond))))
		_ = c.Process.Signal(syscall.SIGKILL)
		r := waitRation(t, c, out, errb, 30*time.Second)
		if r.code == exitUsage && strings.Contains(r.stderr, "another run is writing this joblog") && locked < 100 {
			// The killed run's lock outlived it for a moment (a job
			// forked, not yet exec'd, holds the joblog's descriptor).
			locked++
			run--
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if r.code != 137 && r.code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, r.code, r.stderr)
		}
		waitNoProcs(dir, 5*time.Second)
		noteRecords(run)
		// The set changes: new files, and a file removed that has not run.
		add(3)
		for name := range live {
			if strings.Contains(name, "/s/") && !ranYet(t, dir, name) {
				if err := os.Remove(filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
				delete(live, name)
				break
			}
		}
	}
	final := rcmd{dir: dir, env: []string{"RUN=" + strconv.Itoa(*resumeKills+1)}, args: args}.run(t)
	if final.code != 0 {
		t.Fatalf("last resume: exit %d: %s", final.code, final.stderr)
	}
	noteRecords(*resumeKills + 1)
	recs := checkJoblogOnce(t, jl)
	byInput := map[string]string{} // input -> its command in the joblog
	for _, c := range recs {
		byInput[inputOf(c)] = c
	}
	// No input ran in a run after the one whose end found its record.
	ran := lineCounts(t, filepath.Join(dir, "ran.log"))
	again, after, unrecorded := 0, 0, 0
	perInput := map[string]int{}
	for line, n := range ran {
		runS, in, _ := strings.Cut(line, " ")
		run, _ := strconv.Atoi(runS)
		perInput[in] += n
		if at, ok := recordedIn[byInput[in]]; ok && run > at {
			after++
			t.Errorf("%s ran in run %d after its record was found at the end of run %d", in, run, at)
		}
	}
	for _, n := range perInput {
		if n > 1 {
			again += n - 1
		}
	}
	// Every live file ran and is recorded, but for a moved file whose job
	// was killed after its mv and before its record (the walk no longer
	// finds it); what the jobs move is gone.
	for name := range live {
		_, moved := os.Stat(filepath.Join(dir, name+".done"))
		_, recorded := byInput[name]
		switch {
		case perInput[name] == 0:
			t.Errorf("%s left out: it never ran", name)
		case !recorded && moved != nil:
			t.Errorf("%s left out: no record, not moved", name)
		case !recorded:
			unrecorded++
		}
		if _, err := os.Stat(filepath.Join(dir, name)); strings.Contains(name, "/m/") && err == nil {
			t.Errorf("%s was not moved", name)
		}
	}
	t.Logf("%d SIGKILLs in %s: %d inputs, %d records, %d jobs started; %d runs again of a job killed before its record (allowed), %d after its record (must be 0); %d moved by a job killed before its record; %d starts found the joblog still locked",
		*resumeKills, time.Since(start).Round(time.Second), len(live), len(recs), len(ran), again, after, unrecorded, locked)
}

// inputOf is the input of a TestResumeKillAnywhere job's command, whose
// third word is the input and a quote (echo "$RUN data/..." >> ...).
func inputOf(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) < 3 {
		return ""
	}
	return strings.TrimSuffix(f[2], `"`)
}

// ranYet reports whether ran.log names the file.
func ranYet(t *testing.T, dir, name string) bool {
	b, _ := os.ReadFile(filepath.Join(dir, "ran.log"))
	return strings.Contains(string(b), " "+name+"\n")
}
