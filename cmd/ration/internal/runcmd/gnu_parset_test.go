package runcmd

import "github.com/ration-run/ration/internal/gnu"

// planCasesParset are the plan rows of --_parset (planCases appends them).
func planCasesParset() []planCase {
	c := func(args ...string) []string { return args }
	return []planCase{
		{args: c("--_parset", "var,a,b", "echo", ":::", "x", "y"), want: func(p *runPlan) {
			p.cfg.GNU.Exec.Parset, p.cfg.KeepOrder = &gnu.Parset{Names: []string{"a", "b"}}, true
			p.input.kind, p.input.sources, p.input.total = inputSources, args(":::", "x", "y"), 2
		}},
		// parset "a b c" passes the names separated by spaces.
		{args: c("--_parset", "var,a b\tc", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Exec.Parset, p.cfg.KeepOrder = &gnu.Parset{Names: []string{"a", "b", "c"}}, true
		}},
		{args: c("--_parset", "assoc,h", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Exec.Parset, p.cfg.KeepOrder = &gnu.Parset{Assoc: true, Names: []string{"h"}}, true
		}},
		{args: c("--_parset", "assoc,a,b", "echo"), err: `--_parset: assoc takes one name, not "a,b"`, flag: "--_parset"},
		{args: c("--_parset", "list,a", "echo"), err: `--_parset: "list,a" is not var,NAMES or assoc,NAME`, flag: "--_parset"},
		{args: c("--_parset", "var,", "echo"), err: "--_parset: no destination variable given", flag: "--_parset"},
		{args: c("--_parset", "var,1a", "echo"), err: `--_parset: "1a" is not a shell variable name`, flag: "--_parset"},
		{args: c("--_parset", "var,a", "--dry-run", "echo"), err: "--_parset cannot be combined with --dry-run", flag: "--_parset"},
	}
}
