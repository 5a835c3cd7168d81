package runner

import (
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/runner/input"
)

// TestNewRefuses: New refuses every Config whose settings contradict each
// other or this system, with one line that names the Config's fields (not
// a flag of ration run's), and accepts each rule's nearest valid Config.
func TestNewRefuses(t *testing.T) {
	stdin := func(string) (io.Reader, func(), error) { return nil, nil, nil }
	cases := []struct {
		name string
		set  func(c *Config)
		want string // "": accepted
	}{
		{"no command", func(c *Config) { c.Command = nil }, "runner: no command given"},
		{"resume without joblog", func(c *Config) { c.Resume = true }, "runner: Resume and ResumeFailed need Joblog"},
		{"resume failed without joblog", func(c *Config) { c.ResumeFailed = true }, "runner: Resume and ResumeFailed need Joblog"},
		{"append to stdout", func(c *Config) { c.Joblog, c.JoblogAppend = "-", true },
			"runner: Resume, ResumeFailed and JoblogAppend need a Joblog file, not - (Stdout)"},
		{"negative timeout", func(c *Config) { c.Timeout = -1 }, "runner: negative Timeout, TermTimeout, Grace or Retries"},
		{"negative retries", func(c *Config) { c.Retries = -1 }, "runner: negative Timeout, TermTimeout, Grace or Retries"},
		{"shard index", func(c *Config) { c.Shard = Shard{Index: 2, Count: 2} }, "runner: Shard 2/2: want 0 <= Index < Count"},
		{"halt mode", func(c *Config) { c.Halt = Halt{When: HaltNow + 1, Count: 1} }, "runner: Halt 3,0: unknown When or On"},
		{"halt count", func(c *Config) { c.Halt = Halt{When: HaltSoon} }, "runner: Halt: want Count >= 1 or 0 < Percent <= 100"},
		{"halt percent", func(c *Config) { c.Halt = Halt{When: HaltSoon, Percent: 101} }, "runner: Halt: want Count >= 1 or 0 < Percent <= 100"},
		{"halt NaN", func(c *Config) { c.Halt = Halt{When: HaltSoon, Percent: math.NaN()} }, "runner: Halt: want Count >= 1 or 0 < Percent <= 100"},
		{"halt ok", func(c *Config) { c.Halt = Halt{When: HaltSoon, Percent: 100} }, ""},
		{"negative delay", func(c *Config) { c.GNU.Delay = -time.Second }, "runner: negative GNU.Delay or GNU.TimeoutPercent"},
		{"negative timeout percent", func(c *Config) { c.GNU.TimeoutPercent = -1 }, "runner: negative GNU.Delay or GNU.TimeoutPercent"},
		{"ungroup without line buffer", func(c *Config) { c.GNU.Ungroup = true }, "runner: GNU.Ungroup needs LineBuffer"},
		// ration run refuses -u -k, but --_parset -u sets both: a Config
		// ration builds.
		{"ungroup keep order", func(c *Config) { c.GNU.Ungroup, c.LineBuffer, c.KeepOrder = true, true, true }, ""},
		{"ungroup ok", func(c *Config) { c.GNU.Ungroup, c.LineBuffer = true, true }, ""},
		{"pipe batches", func(c *Config) { c.GNU.Pipe, c.GNU.Batch.MaxArgs = true, 2 },
			"runner: GNU.Pipe needs one argument per job (GNU.Batch's MaxArgs <= 1, no MaxChars)"},
		{"stdin without pipe", func(c *Config) { c.GNU.Stdin = stdin }, "runner: GNU.Stdin, GNU.SendSize and GNU.PipeArg need GNU.Pipe"},
		{"pipe arg without pipe", func(c *Config) { c.GNU.PipeArg = true }, "runner: GNU.Stdin, GNU.SendSize and GNU.PipeArg need GNU.Pipe"},
		{"pipe arg retried", func(c *Config) { c.GNU.Pipe, c.GNU.PipeArg, c.GNU.Stdin, c.Retries = true, true, stdin, 2 },
			"runner: GNU.PipeArg cannot be combined with Retries > 1: the block is given once"},
		{"pipe ok", func(c *Config) { c.GNU.Pipe, c.GNU.PipeArg, c.GNU.Stdin = true, true, stdin }, ""},
		{"results and table", func(c *Config) { c.GNU.Results, c.GNU.Exec.ResultsTable = "dir", "t.csv" },
			"runner: GNU.Exec.ResultsTable and GNU.Results cannot be combined"},
		{"files and results", func(c *Config) { c.GNU.Results, c.GNU.Exec.Files = "dir", true },
			"runner: GNU.Exec.Files and GNU.Results (or GNU.Exec.ResultsTable) cannot be combined"},
		{"files dry run", func(c *Config) { c.GNU.Exec.Files, c.DryRun = true, true }, "runner: GNU.Exec.Files and DryRun cannot be combined"},
		{"files compressed", func(c *Config) { c.GNU.Exec.Files, c.GNU.Exec.Compress = true, true },
			"runner: GNU.Exec.Compress and GNU.Exec.Files cannot be combined: the kept files would not be compressed"},
		{"parset unordered", func(c *Config) { c.GNU.Exec.Parset = &gnu.Parset{Names: []string{"a"}} },
			"runner: GNU.Exec.Parset needs KeepOrder (the values are assigned in input order)"},
		{"parset unnamed", func(c *Config) { c.GNU.Exec.Parset, c.KeepOrder = &gnu.Parset{}, true }, "runner: GNU.Exec.Parset needs at least one name"},
		{"parset to files", func(c *Config) {
			c.GNU.Exec.Parset, c.KeepOrder, c.GNU.Exec.Files = &gnu.Parset{Names: []string{"a"}}, true, true
		},
			"runner: GNU.Exec.Parset cannot be combined with GNU.Exec.Files, GNU.Results, GNU.Exec.ResultsTable or DryRun"},
		{"parset dry run", func(c *Config) {
			c.GNU.Exec.Parset, c.KeepOrder, c.DryRun = &gnu.Parset{Names: []string{"a"}}, true, true
		},
			"runner: GNU.Exec.Parset cannot be combined with GNU.Exec.Files, GNU.Results, GNU.Exec.ResultsTable or DryRun"},
		{"parset ok", func(c *Config) { c.GNU.Exec.Parset, c.KeepOrder = &gnu.Parset{Names: []string{"a"}}, true }, ""},
		{"negative load", func(c *Config) { c.GNU.Exec.Gate.MaxLoad = -1 }, "runner: negative GNU.Exec.Gate.MaxLoad or MemFree"},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases, []struct {
			name string
			set  func(c *Config)
			want string
		}{
			{"nice range", func(c *Config) { c.GNU.Exec.Nice, c.GNU.Exec.NiceSet = 20, true }, "runner: GNU.Exec.Nice: 20 is not a niceness (-20..19)"},
			{"nice ok", func(c *Config) { c.GNU.Exec.Nice, c.GNU.Exec.NiceSet = 19, true }, ""},
			{"gate ok", func(c *Config) { c.GNU.Exec.Gate.MaxLoad = 1 }, ""},
		}...)
	} else {
		cases = append(cases, struct {
			name string
			set  func(c *Config)
			want string
		}{"nice", func(c *Config) { c.GNU.Exec.NiceSet = true },
			"runner: GNU.Exec.Nice: a niceness for jobs is supported on Linux only (not " + runtime.GOOS + ")"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Command: []string{"true"}, Input: input.Args(nil), Jobs: 1}
			tc.set(&c)
			_, err := New(c)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("New: %v, want it accepted", err)
			case tc.want == "":
				return
			case err == nil:
				t.Fatalf("New accepted it, want %q", tc.want)
			case err.Error() != tc.want:
				t.Fatalf("New: %q, want %q", err, tc.want)
			case strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "--"):
				t.Fatalf("New: %q: more than one line, or a flag's name", err)
			}
		})
	}
}
