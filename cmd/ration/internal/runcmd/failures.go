package runcmd

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/internal/flagvalue"
)

// failureFlags are the flags of failures and retries: how long a job may
// run, how often a failing one runs again, when the run stops early, and
// what the exit status counts.
type failureFlags struct {
	timeout     string
	termTimeout string
	retries     int
	retriesSet  bool // --retries was given (--retries 0 is for ever)
	halt        string
	exitCount   bool
}

// addFailureFlags adds failureFlags' flags to fs.
func addFailureFlags(fs *pflag.FlagSet, g *failureFlags) {
	fs.StringVar(&g.timeout, "timeout", "", "stop a job running longer than `DURATION` (500ms, 2m, or seconds)")
	fs.StringVar(&g.termTimeout, "term-timeout", defaultTermTimeout.String(), "on SIGINT/SIGTERM, let running jobs finish for `DURATION`, then stop them")
	fs.IntVar(&g.retries, "retries", 0, "run a failing job up to `N` times in all (0: until it succeeds, as GNU parallel)")
	fs.StringVar(&g.halt, "halt", "never", "stop early at `WHEN,COND`: now|soon,fail|success|done=N|P% (e.g. now,fail=1)")
	fs.BoolVar(&g.exitCount, "exit-count", false, "exit with the number of failed jobs (0, 1-100, 101 for more) even when --halt would exit with a job's own status or a percentage; 255 stays ration's usage errors, 128+N its signals (the Helm chart sets it)")
}

// planFailures checks the flags of failures and retries: --timeout
// (a DURATION, or GNU parallel's P% of the median runtime), --term-timeout,
// --retries, --halt and --exit-count.
func planFailures(p *runPlan, f *runFlags) error {
	c := &p.cfg
	var err error
	if p, ok := strings.CutSuffix(f.timeout, "%"); ok {
		// GNU parallel's P% of the median runtime of the succeeded jobs.
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return flagErr("--timeout", fmt.Errorf("%q is not a percentage > 0", f.timeout))
		}
		c.GNU.TimeoutPercent = v
	} else if f.timeout != "" {
		if c.Timeout, err = flagvalue.ParseDuration(f.timeout); err != nil {
			return flagErr("--timeout", fmt.Errorf("%q is not a duration", f.timeout))
		}
	}
	if c.TermTimeout, err = flagvalue.ParseDuration(f.termTimeout); err != nil {
		return flagErr("--term-timeout", fmt.Errorf("%q is not a duration", f.termTimeout))
	}
	if f.retries < 0 {
		return flagErr("--retries", fmt.Errorf("%d is negative", f.retries))
	}
	if c.Halt, err = flagvalue.ParseHalt(f.halt); err != nil {
		return flagErr("--halt", err)
	}
	p.exitCount = f.exitCount
	c.Retries = f.retries
	if f.retriesSet && f.retries == 0 {
		// GNU parallel's --retries 0: "n=0 means infinite".
		c.Retries = math.MaxInt32
	}
	return nil
}
