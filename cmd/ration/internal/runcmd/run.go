package runcmd

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ration-run/ration/internal/closedpipe"
	"github.com/ration-run/ration/internal/template"
)

// defaultTermTimeout is how long an interrupted run lets its running jobs
// finish before it stops them.
const defaultTermTimeout = 20 * time.Second

const runUsage = `usage: ration run [flags] [--] COMMAND [ARG...] [::: INPUT...]

       ration run [flags] --worker 'CMD ARGS' [::: INPUT...]

Run COMMAND once per input, in parallel, within the container's budget.
Inputs come from the arguments after :::, from -a FILE, from --files
patterns, or else from standard input (one per line, or NUL-separated
with -0). Replacement strings: {} {.} {/} {//} {/.} {#} {%}; without one,
the input is the last argument. Commands run without a shell unless
--shell is given.

With --worker, long-lived worker processes get the inputs as tasks, one
JSON line each, and each answer is printed as one line; a task that broke
--max-breaks workers is quarantined (it fails, nothing else does).

A job killed by the out-of-memory killer runs again (not counted by
--retries) once fewer jobs run beside it; it fails as OOM-killed only when
it was killed running alone, or at its third kill. The concurrency is
halved (unless it ran alone), growing back after successes.
SIGUSR1 prints the table of running jobs.

Exit status: 0 all jobs succeeded; 1-100 the number of failed jobs
(quarantined tasks count as failed); 101 more than 100 failed; 128+N
interrupted by signal N (141: standard output closed by its reader);
255 usage or input error. With --halt, GNU parallel's: the failing job's
status after now|soon,fail, 0 after success; with --exit-count as well,
the number of failed jobs still.
`

// runMain implements `ration run` in three steps: parse the flags and
// plan the run from them and the environment (read through getenv;
// planRun, no I/O), build it (wire), run it.
func runMain(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	return Main(nil, args, getenv, stdin, stdout, stderr)
}

// Main is runMain with the signals handled through h (main's; nil:
// a handler of the run's own).
func Main(h *signalHub, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	p, fs, err := planRun(args, getenv)
	if err != nil {
		return fail(stderr, "ration run", err)
	}
	if p.help || p.cli.info != infoNone {
		out := closedpipe.New(stdout) // 141 after | head, as the other commands
		if p.cli.info != infoNone {   // GNU's --version, --minversion, ...
			return out.Exit(runGNUInfo(p.cli, out))
		}
		print := func() error {
			fmt.Fprintf(out, "%s\n", runUsage)
			return printRunHelp(out, fs)
		}
		if p.shortHelp {
			print = func() error { return printShortHelp(out, fs) }
		}
		if err := print(); err != nil && !out.Closed() {
			return fail(stderr, "ration run", err)
		}
		return out.Exit(0)
	}
	w, err := wire(&p, stdin, stdout, stderr)
	if err != nil {
		return fail(stderr, "ration run", err)
	}
	defer w.close()
	w.hub = h
	if ps := p.cfg.GNU.Exec.Parset; ps != nil {
		return runParset(ps, w.run, stdout, stderr)
	}
	return w.run()
}

// resumeHint tells how to run the rest of an interrupted run: its
// arguments again, with --resume unless it resumed already (resuming:
// --resume, --resume-failed or --retry-failed, however spelled; the
// latter two refuse --resume beside them).
func resumeHint(args []string, joblog string, resuming, inputInArgs bool) string {
	switch joblog {
	case "":
		return "ration run: no --joblog was given, so this run cannot be resumed; add --joblog FILE next time"
	case "-":
		// --resume refuses it: there is no file to read the records from.
		return "ration run: the joblog went to standard output (--joblog -), so this run cannot be resumed; give --joblog FILE next time"
	}
	words := []string{"ration", "run"}
	if !resuming {
		words = append(words, "--resume")
	}
	words = append(words, args...)
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = hintWord(w)
	}
	hint := "ration run: to run the rest: " + strings.Join(quoted, " ")
	if !inputInArgs {
		hint += "  (with the same standard input)"
	}
	return hint
}

// hintWord quotes one word of the resume hint so that the hint stays one
// line that a terminal shows and copies back byte for byte: as
// template.Quote does, unless the word holds a control character or bytes
// that are not UTF-8. Such a word is written in $'...' (bash, zsh, ksh,
// busybox sh), with \n, \t, \r and \xHH escapes: inside '...' a newline would
// split the hint, and ration's one-line messages write it as "; ", so the
// pasted command would run another input.
func hintWord(w string) string {
	if utf8.ValidString(w) && !strings.ContainsFunc(w, unicode.IsControl) {
		return template.Quote(w)
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(w); {
		r, n := utf8.DecodeRuneInString(w[i:])
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError && n == 1, unicode.IsControl(r):
			for _, c := range []byte(w[i : i+n]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteString(w[i : i+n])
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}
