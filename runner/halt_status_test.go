package runner_test

import (
	"context"
	"testing"

	"github.com/ration-run/ration/internal/flagvalue"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
)

// TestGNUHaltStatus: the exit status GNU parallel gives a halted run.
func TestGNUHaltStatus(t *testing.T) {
	for _, c := range []struct {
		halt   string
		inputs []string
		jobs   int
		want   int
	}{
		{"now,fail=1", []string{"0", "3", "0"}, 1, 3},
		{"soon,fail=1", []string{"0", "4", "5"}, 1, 4},
		{"now,success=1", []string{"1", "0", "1"}, 1, 0},
		{"now,done=1", []string{"5", "0"}, 1, 5},
		{"soon,fail=2", []string{"1", "2", "0"}, 1, 2},
		// 20% of 10 jobs: the second failure halts; the status is the
		// percentage of failed jobs of all, rounded up.
		{"soon,fail=20%", []string{"0", "1", "0", "2", "0", "0", "0", "0", "0", "0"}, 1, 20},
		// GNU parallel 20221122's exit status of these, at -j1. A
		// percentage that never held still gives the percentage of
		// failed jobs (of those that ran), as GNU's man page says.
		{"soon,fail=100%", []string{"1", "0", "3"}, 1, 67},
		{"now,success=50%", []string{"1", "2", "3"}, 1, 100},
		{"now,fail=80%", []string{"7", "2", "0", "4", "0"}, 1, 60},
		{"now,fail=30%", []string{"0", "0", "0", "0", "0", "0", "0", "3", "4", "9"}, 1, 30},
		// A percentage that comes to one job is fail=1 (GNU's halt_count
		// == 1): the status of the job that halted the run.
		{"now,fail=50%", []string{"0", "5"}, 1, 5},
		{"now,fail=25%", []string{"0", "5", "0", "0"}, 1, 5},
		{"now,fail=10%", []string{"0", "0", "0", "0", "0", "0", "0", "0", "0", "9"}, 1, 9},
		{"now,done=50%", []string{"5", "0"}, 1, 5},
		// A count that never held: the number of failed jobs, as without
		// --halt.
		{"now,success=1", []string{"1", "2", "3"}, 1, 3},
	} {
		h, err := flagvalue.ParseHalt(c.halt)
		if err != nil {
			t.Fatal(err)
		}
		r, err := runner.New(runner.Config{Command: []string{"sh", "-c", "exit $1", "sh"}, Input: input.Args(c.inputs), Jobs: c.jobs, Halt: h})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		st, ok := r.HaltStatus()
		if !ok {
			st = int(min(sum.Failed, 101)) // as ration run exits
		}
		if st != c.want {
			t.Errorf("--halt %s over %v: status %d (decided by --halt: %v), want %d", c.halt, c.inputs, st, ok, c.want)
		}
	}
}
