package runcmd

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ration-run/ration/internal/gnuinput"
)

// planCasesGNUCLI are the plan rows of GNU parallel's options that inform, name the
// separators, shuffle or read a profile.
func planCasesGNUCLI() []planCase {
	c := func(args ...string) []string { return args }
	info := func(i gnuInfo) func(p *runPlan) {
		return func(p *runPlan) { *p = runPlan{cli: gnuCLIPlan{info: i}} }
	}
	return []planCase{
		// Separators: ::: and :::: are then plain words.
		{args: c("--arg-sep", ",,", "echo", ":::", ",,", "a", ",,+", "1", "::::", "f"), want: func(p *runPlan) {
			p.cfg.Command = []string{"echo", ":::"}
			p.input.kind, p.input.sources = inputSources, slices.Concat(args(",,", "a"), args(",,+", "1"), []sourcePlan{{name: ":::: f", path: "f"}})
		}},
		{args: c("--arg-file-sep", "//", "echo", ":::", "a", "//+", "f", "::::", "g"), want: func(p *runPlan) {
			p.input.kind = inputSources
			p.input.sources = slices.Concat(args(":::", "a"), []sourcePlan{{name: "//+ f", path: "f", linked: true}, {name: "//+ ::::", path: "::::", linked: true}, {name: "//+ g", path: "g", linked: true}})
		}},
		// As GNU parallel: a separator that is both is the file separator.
		{args: c("--arg-sep", "::::", "echo", "::::", "f"), want: func(p *runPlan) {
			p.input.kind, p.input.sources = inputSources, []sourcePlan{{name: ":::: f", path: "f"}}
		}},
		{args: c("--arg-sep", "", "echo"), err: "--arg-sep: the separator is empty", flag: "--arg-sep"},
		{args: c("--arg-file-sep=", "echo"), err: "--arg-file-sep: the separator is empty", flag: "--arg-file-sep"},

		{args: c("--shuf", "echo", ":::", "a", "b"), want: func(p *runPlan) {
			p.input.kind, p.input.sources, p.input.total, p.cli.shuf = inputSources, args(":::", "a", "b"), 2, true
		}},
		{args: c("--use-cpus-instead-of-cores", "echo")},
		// -j FILE: a value that is no number and names a file; wire reads
		// it. Any other value is checked as a number (-j zero's row).
		{args: c("-j", "testdata/gnucli.jobs", "echo"), want: func(p *runPlan) { p.cli.jobsFile, p.worker.watch = "testdata/gnucli.jobs", false }},
		{args: c("-j", "testdata/gnucli.jobs", "--worker", "cat"), err: "-j FILE cannot be combined with --worker", flag: "--jobs"},
		{args: c("--shellquote", "--shellquote"), want: func(p *runPlan) {
			p.cfg.Command, p.cfg.GNU.InputIsCommand, p.parentShell = []string{"{}"}, true, true
			p.cfg.DryRun, p.bar, p.cli.shellQuote = true, barOff, 2
		}},
		{args: c("--shellquote", "--worker", "cat"), err: "--shellquote cannot be combined with --worker", flag: "--shellquote"},
		// -J: the profile's options come before the command line's; its
		// other words before the command.
		{args: c("-J", "./testdata/gnucli.profile", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Tag, p.cfg.KeepOrder = true, true
		}},
		{args: c("--profile", "./testdata/gnucli-prefix.profile", "--profile", "./testdata/gnucli.profile", "echo", "x"), want: func(p *runPlan) {
			p.cfg.GNU.Tag, p.cfg.KeepOrder = true, true
			p.cfg.Command = []string{"nice", "-n", "1", "echo", "x"}
		}},
		{args: c("echo"), env: map[string]string{"PARALLEL": "-k --tag"}, want: func(p *runPlan) {
			p.cfg.GNU.Tag, p.cfg.KeepOrder = true, true
		}},
		{args: c("-J", "./testdata/no-such.profile", "echo"), flag: "--profile",
			err: `--profile: no profile "./testdata/no-such.profile" in ./testdata/no-such.profile`},
		{args: c("echo"), env: map[string]string{"PARALLEL": "--bogus"}, flag: "PARALLEL", err: "PARALLEL: unknown flag: --bogus"},

		// Informational options: printed, nothing else planned.
		{args: c("--version", "--bogus-is-not-parsed"), err: "unknown flag: --bogus-is-not-parsed"},
		{args: c("--version"), want: info(infoVersion)},
		{args: c("-V", "echo"), want: info(infoVersion)},
		{args: c("--minversion", "20130722"), want: func(p *runPlan) { *p = runPlan{cli: gnuCLIPlan{info: infoMinVersion, minVersion: 20130722}} }},
		{args: c("--minversion", "2013-07-22"), err: `--minversion: "2013-07-22" is not a version like 20130722`, flag: "--minversion"},
		{args: c("--max-line-length-allowed"), want: info(infoMaxLineLength)},
		{args: c("--number-of-cpus"), want: info(infoCores)},
		{args: c("--number-of-cores"), want: info(infoCores)},
		{args: c("--number-of-threads"), want: info(infoThreads)},
		{args: c("--number-of-sockets"), want: info(infoSockets)},
	}
}

// TestShellQuoterQuotesEachLine: --shellquote's writer quotes each line
// written (once per --shellquote) and keeps its newline.
func TestShellQuoterQuotesEachLine(t *testing.T) {
	var b strings.Builder
	q := &shellQuoter{w: &b, times: 2}
	for _, l := range []string{"echo a b\n", "it's\n", "ls"} {
		if n, err := q.Write([]byte(l)); n != len(l) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", l, n, err)
		}
	}
	want := `"'"'echo a b'"'"` + "\n" + `"'"'it'"'"'"'"'"'"'"'"'s'"'"` + "\n" + "ls"
	if b.String() != want {
		t.Errorf("got %s\nwant %s", b.String(), want)
	}
}

// TestShellWords: the words of a profile line or $PARALLEL, as perl's
// Text::ParseWords::shellwords splits them.
func TestShellWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  bool
	}{
		{in: "", want: nil},
		{in: "  --nice 17\t", want: []string{"--nice", "17"}},
		{in: `--tagstring 'a b' -I"{ }" x\ y`, want: []string{"--tagstring", "a b", "-I{ }", "x y"}},
		{in: `"a \"q\" \\ b"''`, want: []string{`a "q" \ b`}},
		{in: `'unterminated`, err: true},
		{in: `"unterminated`, err: true},
	} {
		got, err := shellWords(c.in)
		if (err != nil) != c.err || !slices.Equal(got, c.want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// TestHostCPUs counts a topology as GNU parallel does: cores are the
// distinct thread sibling masks, sockets the distinct packages, each at
// most the CPUs of the affinity.
func TestHostCPUs(t *testing.T) {
	root := t.TempDir()
	// 2 sockets x 2 cores x 2 threads.
	for cpu := range 8 {
		dir := filepath.Join(root, "cpu"+string(rune('0'+cpu)), "topology")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		core := cpu % 4
		write := func(name, body string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("thread_siblings", []string{"11\n", "22\n", "44\n", "88\n"}[core])
		write("physical_package_id", []string{"0\n", "1\n"}[core/2])
	}
	for _, c := range []struct {
		active int
		want   cpuCounts
	}{
		{8, cpuCounts{sockets: 2, cores: 4, threads: 8}},
		{3, cpuCounts{sockets: 2, cores: 3, threads: 3}},
		{1, cpuCounts{sockets: 1, cores: 1, threads: 1}},
	} {
		if got := hostCPUs(root, c.active); got != c.want {
			t.Errorf("active %d: %+v, want %+v", c.active, got, c.want)
		}
	}
	if got := hostCPUs(filepath.Join(root, "none"), 5); got != (cpuCounts{5, 5, 5}) {
		t.Errorf("no topology: %+v, want every count 5", got)
	}
}

// TestShuffledReadsAllFirst: --shuf's arguments are every argument, in
// the order the shuffle chose, and a read error comes before any.
func TestShuffledReadsAllFirst(t *testing.T) {
	reverse := func(n int, swap func(i, j int)) {
		for i := range n / 2 {
			swap(i, n-1-i)
		}
	}
	seq := func(err error, vals ...string) gnuinput.ArgSeq {
		return func(yield func(gnuinput.Arg, error) bool) {
			for _, v := range vals {
				if !yield(gnuinput.Arg{v}, nil) {
					return
				}
			}
			if err != nil {
				yield(nil, err)
			}
		}
	}
	var got []string
	for a, err := range shuffled(seq(nil, "a", "b", "c"), reverse) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a.String())
	}
	if !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Errorf("got %q", got)
	}
	boom := errors.New("boom")
	var n int
	for a, err := range shuffled(seq(boom, "a", "b"), reverse) {
		n++
		if n == 1 && (a != nil || !errors.Is(err, boom)) {
			t.Errorf("first yield %q, %v; want the read error", a, err)
		}
	}
	if n != 1 {
		t.Errorf("%d yields after a read error, want 1", n)
	}
}

// TestGNUAliases: every GNU parallel alias names a flag of ration run, and
// the alias is read as that flag.
func TestGNUAliases(t *testing.T) {
	var f runFlags
	fs := newRunFlagSet(&f)
	for alias, to := range gnuAliases {
		if fs.Lookup(to) == nil {
			t.Errorf("--%s stands for --%s, which ration run does not have", alias, to)
		}
		if fs.Lookup(alias) != fs.Lookup(to) {
			t.Errorf("--%s is not read as --%s", alias, to)
		}
	}
}
