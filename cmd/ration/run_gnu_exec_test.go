package main

import (
	"syscall"
	"testing"
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
		// GNU's --files: bare, before the command and :::, ::::, -a
		// inputs, or with no command.
		{args: c("--files", "echo", ":::", "A", "B"), want: func(p *runPlan) {
			p.cfg.GNU.Exec.Files = true
			p.input.kind, p.input.sources, p.input.total = inputSources, args(":::", "A", "B"), 2
		}},
		{args: c("-a", "in", "--files", "-k", "wc", "-l"), want: func(p *runPlan) {
			p.cfg.GNU.Exec.Files, p.cfg.KeepOrder, p.cfg.Command = true, true, []string{"wc", "-l"}
			p.input.kind, p.input.sources = inputSources, argFiles("in")
		}},
		{args: c("--output-files"), want: func(p *runPlan) {
			p.cfg.GNU.Exec.Files, p.cfg.Command, p.cfg.GNU.InputIsCommand, p.parentShell = true, []string{"{}"}, true, true
		}},
		// ration's --files PATTERN stays so before a command alone.
		{args: c("--files", "*.go", "--output-files", "wc"), want: func(p *runPlan) {
			p.cfg.GNU.Exec.Files, p.cfg.Command = true, []string{"wc"}
			p.input.kind, p.input.patterns = inputFiles, []string{"*.go"}
		}},
		{args: c("--tmpdir", "/var/tmp", "--output-files", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Exec.Files, p.cfg.GNU.Exec.TmpDir, p.cfg.TempDir = true, "/var/tmp", "/var/tmp"
		}},
		{args: c("--output-files", "--results", "out", "echo"), err: "--files (--output-files) and --results cannot be combined", flag: "--output-files"},
		{args: c("--results", "out/{}", "echo"), want: func(p *runPlan) { p.cfg.GNU.Results = "out/{}" }},
		{args: c("--results", "my.CSV", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.ResultsTable = "my.CSV" }},
		{args: c("--res", "t.tsv", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.ResultsTable = "t.tsv" }},
		{args: c("--results", "x.json", "echo"), err: "--results NAME.json (JSON lines on stdout) is not supported: use --results NAME.csv, or --joblog FILE", flag: "--results"},
		{args: c("--termseq", "TERM,10", "--worker", "cat"), err: "--termseq cannot be combined with --worker (a worker is stopped by closing its stdin, then killed)", flag: "--termseq"},
	}
}

// TestGNUFilesLast: a bare --files as the last argument is GNU's (every
// input a command line, its output to a file), not ration's --files
// missing its PATTERN.
func TestGNUFilesLast(t *testing.T) {
	p, _, err := planOf(t, []string{"-k", "--files"}, nil)
	if err != nil || !p.cfg.GNU.Exec.Files || !p.cfg.GNU.InputIsCommand || !p.cfg.KeepOrder {
		t.Errorf("plan of -k --files: %v, files %v, input is command %v", err, p.cfg.GNU.Exec.Files, p.cfg.GNU.InputIsCommand)
	}
}
