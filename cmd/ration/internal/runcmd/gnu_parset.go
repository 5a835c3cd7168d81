package runcmd

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/internal/gnu"
)

// addParsetFlag adds --_parset, GNU parallel's option for its parset shell
// function (env_parallel.bash), hidden as GNU's is: parset runs
// `parallel -k --_parset var,NAMES ...` and evals what it prints, so with
// ration as `parallel` on PATH, parset assigns ration's job outputs.
func addParsetFlag(fs *pflag.FlagSet, f *runFlags) {
	fs.StringVar(&f.parset, "_parset", "", "var,NAMES or assoc,NAME: print each job's output as bash assignments to NAMES (what GNU parallel's parset function evals)")
	_ = fs.MarkHidden("_parset")
}

// bashVarName is a variable name bash accepts.
var bashVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// planParset checks --_parset: var,NAMES (names split on commas and
// spaces, as GNU's parset takes "a b c" or a,b,c) or assoc,NAME. The
// values come in input order, as with -k.
func planParset(p *runPlan, f *runFlags, _ func(string) string) error {
	if f.parset == "" {
		return nil
	}
	mode, list, _ := strings.Cut(f.parset, ",")
	names := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	ps := &gnu.Parset{Names: names}
	switch mode {
	case "var":
	case "assoc":
		ps.Assoc = true
		if len(names) != 1 {
			return flagErr("--_parset", fmt.Errorf("assoc takes one name, not %q", list))
		}
	default:
		return flagErr("--_parset", fmt.Errorf("%q is not var,NAMES or assoc,NAME", f.parset))
	}
	if len(names) == 0 {
		return flagErr("--_parset", errors.New("no destination variable given"))
	}
	for _, n := range names {
		if !bashVarName.MatchString(n) {
			return flagErr("--_parset", fmt.Errorf("%q is not a shell variable name", n))
		}
	}
	switch {
	case p.cfg.GNU.Exec.Files || p.cfg.GNU.Results != "" || p.cfg.GNU.Exec.ResultsTable != "":
		return flagMsg("--_parset", "--_parset cannot be combined with --files or --results")
	case p.cfg.DryRun:
		return flagMsg("--_parset", "--_parset cannot be combined with --dry-run")
	case p.worker.command != "":
		return flagMsg("--_parset", "--_parset cannot be combined with --worker")
	}
	p.cfg.GNU.Exec.Parset, p.cfg.KeepOrder = ps, true
	return nil
}

// runParset runs the run with --_parset's header before it and its footer
// (the exit status for parset to return) after; more jobs than variables
// is GNU's error, exit status 255.
func runParset(ps *gnu.Parset, run func() int, stdout, stderr io.Writer) int {
	fmt.Fprint(stdout, ps.Header())
	code := run()
	if n := ps.Unnamed(); n > 0 {
		fmt.Fprintf(stderr, "ration run: --_parset: too few named destination variables (%d of the jobs have none)\n", n)
		code = 255
	}
	fmt.Fprint(stdout, ps.Footer(code))
	return code
}
