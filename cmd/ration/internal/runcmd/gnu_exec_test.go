package runcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/runner"
)

const retryShard = "--retry-failed cannot be combined with --shard or RATION_SHARD_COUNT: the joblog holds command lines, not the inputs a shard is made of; run the shard's command and inputs again with --resume-failed"

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
		{args: c("--joblog", "jl", "--retry-failed"), want: func(p *runPlan) {
			p.cfg.Joblog, p.cfg.ResumeFailed, p.exec.retryFailed = "jl", true, true
			p.cfg.Command, p.cfg.GNU.InputIsCommand, p.parentShell = []string{"{}"}, true, true
		}},
		{args: c("--retry-failed"), err: "--retry-failed needs --joblog FILE (it runs again the commands FILE records as failed)", flag: "--retry-failed"},
		// A shard hashed the joblog's command lines, not the inputs that
		// made the shard: it retried none or some of the failed jobs and
		// exited 0.
		{args: c("--joblog", "jl", "--retry-failed", "--shard", "0/2"), err: retryShard, flag: "--retry-failed"},
		{args: c("--joblog", "jl", "--retry-failed"), env: map[string]string{"RATION_SHARD_COUNT": "2", "JOB_COMPLETION_INDEX": "0"}, err: retryShard, flag: "--retry-failed"},
		{args: c("--joblog", "jl", "--retry-failed", "echo", ":::", "x"), flag: "--retry-failed",
			err: "--retry-failed runs again the commands the joblog records and takes no command or inputs (GNU parallel ignores them); to run the failed jobs of a command and inputs again, give them with --resume-failed"},
		{args: c("--load", "3.5", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Gate.MaxLoad = 3.5 }},
		{args: c("--load", "50%", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Gate.MaxLoad = float64(runtime.NumCPU()) / 2 }},
		{args: c("--load", "0", "echo"), err: `--load: "0" is not a number > 0 or a percentage of the CPUs like 100%`, flag: "--load"},
		{args: c("--noswap", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Gate.NoSwap = true }},
		{args: c("--memfree", "1G", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Gate.MemFree = 1 << 30 }},
		{args: c("--memfree", "1g", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Gate.MemFree = 1e9 }},
		{args: c("--memfree", "2Mi", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Gate.MemFree = 2 << 20 }},
		{args: c("--memfree", "lots", "echo"), err: `--memfree: "lots" is not a size like 1G (K, M, G: 1024-based; k, m, g: 1000-based)`, flag: "--memfree"},
		{args: c("--termseq", "TERM,10", "--worker", "cat"), err: "--termseq cannot be combined with --worker (a worker is stopped by closing its stdin, then killed)", flag: "--termseq"},
	}
}

// TestGNUFilesAsFinalArgument: a bare --files as the last argument is GNU's (every
// input a command line, its output to a file), not ration's --files
// missing its PATTERN.
func TestGNUFilesAsFinalArgument(t *testing.T) {
	p, _, err := planOf(t, []string{"-k", "--files"}, nil)
	if err != nil || !p.cfg.GNU.Exec.Files || !p.cfg.GNU.InputIsCommand || !p.cfg.KeepOrder {
		t.Errorf("plan of -k --files: %v, files %v, input is command %v", err, p.cfg.GNU.Exec.Files, p.cfg.GNU.InputIsCommand)
	}
}

// TestRetryInputs: --retry-failed's inputs are the last command of every
// Seq the joblog records, "true" for a Seq it lacks; a missing joblog is
// an error naming it.
func TestRetryInputs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	log := "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n" +
		"1\t:\t1.000\t0.1\t0\t0\t1\t0\texit 1\n" +
		"3\t:\t1.000\t0.1\t0\t0\t0\t0\techo 'a b'\n" +
		"1\t:\t1.000\t0.1\t0\t0\t2\t0\texit 2\n"
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	p := runPlan{cfg: runConfig{Config: runner.Config{Joblog: path}}, exec: execPlan{retryFailed: true}}
	if err := checkGNUExec(&p); err != nil {
		t.Fatal(err)
	}
	want := []sourcePlan{{name: "--retry-failed", args: []string{"exit 2", "true", "echo 'a b'"}}}
	if p.input.kind != inputSources || !reflect.DeepEqual(p.input.sources, want) {
		t.Errorf("inputs %v %+v; want %+v", p.input.kind, p.input.sources, want)
	}
	p = runPlan{cfg: runConfig{Config: runner.Config{Joblog: filepath.Join(dir, "none")}}, exec: execPlan{retryFailed: true}}
	if err := checkGNUExec(&p); err == nil || err.Error() != "--retry-failed: --joblog "+filepath.Join(dir, "none")+": no such file or directory" {
		t.Errorf("missing joblog: %v", err)
	}
}

// TestRunNice: ration run --nice N starts every job at niceness N, read
// by the job from /proc/self/stat (field 19), through plan, wire and the
// process executor (the binary: the niced forking thread outlives a run).
func TestRunNice(t *testing.T) {
	if !runhook.NiceSupported {
		t.Skip("--nice is Linux only")
	}
	cmd := exec.Command(buildRation(t), "run", "--quiet", "--nice", "13", "-k", "sh", "-c", "exec cat /proc/self/stat", "{}", ":::", "a", "b")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err != nil || len(lines) != 2 {
		t.Fatalf("%v, stdout %q, stderr %q", err, out.String(), errb.String())
	}
	for _, l := range lines {
		_, rest, _ := strings.Cut(l, ") ")
		if f := strings.Fields(rest); len(f) < 17 || f[16] != "13" {
			t.Errorf("a job ran at another niceness than 13: %q", l)
		}
	}
}
