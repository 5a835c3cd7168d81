package main

import (
	"syscall"
	"time"

	"github.com/ration-run/ration/runner"
)

// planCasesGNUExec are the plan rows of GNU parallel's flags that change
// how jobs run (planCases appends them).
func planCasesGNUExec() []planCase {
	c := func(args ...string) []string { return args }
	return []planCase{
		{args: c("--nice", "17", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Nice, p.cfg.GNU.Exec.NiceSet = 17, true }},
		{args: c("--nice", "0", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.NiceSet = true }},
		{args: c("--nice", "20", "echo"), err: "--nice: 20 is not a niceness (-20..19)", flag: "--nice"},
		{args: c("--nice", "-21", "echo"), err: "--nice: -21 is not a niceness (-20..19)", flag: "--nice"},
		{args: c("--nice", "5", "--worker", "cat"), err: "--nice cannot be combined with --worker: run nice -n N ration run ...", flag: "--nice"},
		{args: c("--termseq", "INT,200,TERM,100,KILL,25", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Exec.TermSeq = runner.TermSeq{{Signal: syscall.SIGINT, Wait: 200 * time.Millisecond},
				{Signal: syscall.SIGTERM, Wait: 100 * time.Millisecond}, {Signal: syscall.SIGKILL, Wait: 25 * time.Millisecond}}
			p.cfg.Grace = 325 * time.Millisecond
		}},
		{args: c("--termseq", "TERM,soon", "echo"), err: `--termseq: "TERM,soon": "soon" is not a wait in milliseconds`, flag: "--termseq"},
		{args: c("--termseq", "TERM,10", "--worker", "cat"), err: "--termseq cannot be combined with --worker (a worker is stopped by closing its stdin, then killed)", flag: "--termseq"},
	}
}
