//go:build unix

package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/reaper"
	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/joblog"
)

// TestProcessExecutorReaper runs jobs that leave orphans behind through a
// ProcessExecutor with an active Reaper (this test process made a child
// subreaper, as ration is when PID 1): every job keeps its own exit
// status, and the orphans reparented to this process are reaped.
func TestProcessExecutorReaper(t *testing.T) {
	rp, err := reaper.New(context.Background(), reaper.Options{Subreaper: true})
	if err != nil {
		t.Skipf("cannot become a child subreaper: %v", err)
	}
	defer rp.Stop()
	var ins []string
	for i := 1; i <= 60; i++ {
		ins = append(ins, strconv.Itoa(i))
	}
	jl := filepath.Join(t.TempDir(), "joblog")
	// (sleep &) orphans the sleep at once: it is reparented to us.
	r, err := New(Config{Command: []string{"sh", "-c", "(sleep 0.05 &); exit $(({} % 4))"}, Input: input.Args(ins),
		Jobs: 6, Joblog: jl, Executor: &ProcessExecutor{Reaper: rp}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Succeeded != 15 || sum.Failed != 45 {
		t.Errorf("summary %+v: want 15 succeeded, 45 failed", sum)
	}
	b, err := os.ReadFile(jl)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		e, err := joblog.ParseLine(line)
		if err != nil {
			continue // the header
		}
		n++
		if want := int(e.Seq % 4); e.Exitval != want || e.Signal != 0 {
			t.Errorf("job %d: exit %d signal %d, want exit %d: the reaper took the status", e.Seq, e.Exitval, e.Signal, want)
		}
	}
	if n != len(ins) {
		t.Errorf("%d joblog lines, want %d", n, len(ins))
	}
	// The orphans (sleep 0.05) are ours until reaped: none may stay.
	deadline := time.Now().Add(5 * time.Second)
	for {
		kids := childrenOf(os.Getpid())
		if len(kids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("children left (zombies not reaped?): %v", kids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childrenOf lists the processes whose parent is pid, as "pid state".
func childrenOf(pid int) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		if _, err := strconv.Atoi(ent.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, ent.Name()+" "+f[0])
		}
	}
	return out
}
