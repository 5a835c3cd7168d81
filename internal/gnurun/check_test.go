package gnurun

import (
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
)

// TestNewRefusesGNU: runner.New refuses every Config whose GNU options
// contradict each other, the Config's other fields or this system, with
// one line that names the fields (not a flag of ration run's), and
// accepts each rule's nearest valid Config.
func TestNewRefusesGNU(t *testing.T) {
	stdin := func(string) (io.Reader, func(), error) { return nil, nil, nil }
	cases := []struct {
		name string
		set  func(c *runner.Config, g *GNU)
		want string // "": accepted
	}{
		{"negative delay", func(c *runner.Config, g *GNU) { g.Delay = -time.Second }, "runner: negative GNU.Delay or GNU.TimeoutPercent"},
		{"negative timeout percent", func(c *runner.Config, g *GNU) { g.TimeoutPercent = -1 }, "runner: negative GNU.Delay or GNU.TimeoutPercent"},
		{"ungroup without line buffer", func(c *runner.Config, g *GNU) { g.Ungroup = true }, "runner: GNU.Ungroup needs LineBuffer"},
		// ration run refuses -u -k, but --_parset -u sets both: a Config
		// ration builds.
		{"ungroup keep order", func(c *runner.Config, g *GNU) { g.Ungroup, c.LineBuffer, c.KeepOrder = true, true, true }, ""},
		{"ungroup ok", func(c *runner.Config, g *GNU) { g.Ungroup, c.LineBuffer = true, true }, ""},
		{"pipe batches", func(c *runner.Config, g *GNU) { g.Pipe, g.Batch.MaxArgs = true, 2 },
			"runner: GNU.Pipe needs one argument per job (GNU.Batch's MaxArgs <= 1, no MaxChars)"},
		{"stdin without pipe", func(c *runner.Config, g *GNU) { g.Stdin = stdin }, "runner: GNU.Stdin, GNU.SendSize and GNU.PipeArg need GNU.Pipe"},
		{"pipe arg without pipe", func(c *runner.Config, g *GNU) { g.PipeArg = true }, "runner: GNU.Stdin, GNU.SendSize and GNU.PipeArg need GNU.Pipe"},
		{"pipe arg retried", func(c *runner.Config, g *GNU) { g.Pipe, g.PipeArg, g.Stdin, c.Retries = true, true, stdin, 2 },
			"runner: GNU.PipeArg cannot be combined with Retries > 1: the block is given once"},
		{"pipe ok", func(c *runner.Config, g *GNU) { g.Pipe, g.PipeArg, g.Stdin = true, true, stdin }, ""},
		{"results and table", func(c *runner.Config, g *GNU) { g.Results, g.Exec.ResultsTable = "dir", "t.csv" },
			"runner: GNU.Exec.ResultsTable and GNU.Results cannot be combined"},
		{"files and results", func(c *runner.Config, g *GNU) { g.Results, g.Exec.Files = "dir", true },
			"runner: GNU.Exec.Files and GNU.Results (or GNU.Exec.ResultsTable) cannot be combined"},
		{"files dry run", func(c *runner.Config, g *GNU) { g.Exec.Files, c.DryRun = true, true }, "runner: GNU.Exec.Files and DryRun cannot be combined"},
		{"files compressed", func(c *runner.Config, g *GNU) { g.Exec.Files, g.Exec.Compress = true, true },
			"runner: GNU.Exec.Compress and GNU.Exec.Files cannot be combined: the kept files would not be compressed"},
		{"parset unordered", func(c *runner.Config, g *GNU) { g.Exec.Parset = &gnu.Parset{Names: []string{"a"}} },
			"runner: GNU.Exec.Parset needs KeepOrder (the values are assigned in input order)"},
		{"parset unnamed", func(c *runner.Config, g *GNU) { g.Exec.Parset, c.KeepOrder = &gnu.Parset{}, true }, "runner: GNU.Exec.Parset needs at least one name"},
		{"parset to files", func(c *runner.Config, g *GNU) {
			g.Exec.Parset, c.KeepOrder, g.Exec.Files = &gnu.Parset{Names: []string{"a"}}, true, true
		},
			"runner: GNU.Exec.Parset cannot be combined with GNU.Exec.Files, GNU.Results, GNU.Exec.ResultsTable or DryRun"},
		{"parset dry run", func(c *runner.Config, g *GNU) {
			g.Exec.Parset, c.KeepOrder, c.DryRun = &gnu.Parset{Names: []string{"a"}}, true, true
		},
			"runner: GNU.Exec.Parset cannot be combined with GNU.Exec.Files, GNU.Results, GNU.Exec.ResultsTable or DryRun"},
		{"parset ok", func(c *runner.Config, g *GNU) { g.Exec.Parset, c.KeepOrder = &gnu.Parset{Names: []string{"a"}}, true }, ""},
		{"negative load", func(c *runner.Config, g *GNU) { g.Exec.Gate.MaxLoad = -1 }, "runner: negative GNU.Exec.Gate.MaxLoad or MemFree"},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases, []struct {
			name string
			set  func(c *runner.Config, g *GNU)
			want string
		}{
			{"nice range", func(c *runner.Config, g *GNU) { g.Exec.Nice, g.Exec.NiceSet = 20, true }, "runner: GNU.Exec.Nice: 20 is not a niceness (-20..19)"},
			{"nice ok", func(c *runner.Config, g *GNU) { g.Exec.Nice, g.Exec.NiceSet = 19, true }, ""},
			{"gate ok", func(c *runner.Config, g *GNU) { g.Exec.Gate.MaxLoad = 1 }, ""},
		}...)
	} else {
		cases = append(cases, struct {
			name string
			set  func(c *runner.Config, g *GNU)
			want string
		}{"nice", func(c *runner.Config, g *GNU) { g.Exec.NiceSet = true },
			"runner: GNU.Exec.Nice: a niceness for jobs is supported on Linux only (not " + runtime.GOOS + ")"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := runner.Config{Command: []string{"true"}, Input: input.Args(nil), Jobs: 1}
			var g GNU
			tc.set(&c, &g)
			c.Dialect = &g
			_, err := runner.New(c)
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
