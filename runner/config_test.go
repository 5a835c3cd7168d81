package runner

import (
	"math"
	"strings"
	"testing"

	"github.com/ration-run/ration/runner/input"
)

// TestNewRefuses: New refuses every Config whose settings contradict each
// other, with one line that names the Config's fields (not a flag of
// ration run's), and accepts each rule's nearest valid Config. (The GNU
// options' rules: internal/gnurun's TestNewRefusesGNU.)
func TestNewRefuses(t *testing.T) {
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
