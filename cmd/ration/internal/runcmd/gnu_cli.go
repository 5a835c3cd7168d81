package runcmd

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/runner/event"
)

// gnuLevel is the GNU parallel version whose behaviour `ration run` is
// compared with (TestGNUExamples, docs/compat.md): what --minversion
// checks against and --version names.
const gnuLevel = 20221122

// gnuCLIFlags are GNU parallel's options that only inform (print and
// exit), name the source separators, shuffle the jobs or read options
// from a profile.
type gnuCLIFlags struct {
	argSep, argFileSep string
	shuf               bool
	useCPUs            bool
	// profiles are -J's: read before parsing (gnuArgs); the flag is
	// registered so that help lists it and parsing skips it.
	profiles []string
	// The informational options: each prints and exits.
	version                                   bool
	minVersion                                string
	maxLineLength                             bool
	numCPUs, numCores, numThreads, numSockets bool
	shellQuote                                int
}

// gnuInfo is an informational option: `ration run` prints and exits.
type gnuInfo int

const (
	infoNone gnuInfo = iota
	infoVersion
	infoMinVersion
	infoMaxLineLength
	infoCores // --number-of-cpus and --number-of-cores, as GNU parallel
	infoThreads
	infoSockets
)

// gnuCLIPlan is what gnuCLIFlags' options planned.
type gnuCLIPlan struct {
	// info, when set, is printed instead of running anything.
	info gnuInfo
	// minVersion is --minversion's version (infoMinVersion).
	minVersion int
	// shuf shuffles the arguments: all of them are read first.
	shuf bool
	// jobsFile is -j FILE: the -j value is the file's content, read again
	// whenever a job ends and the file changed.
	jobsFile string
	// shellQuote is --shellquote's count: print each command quoted that
	// many times instead of running it.
	shellQuote int
}

// countFlag is a flag that counts how many times it is given.
type countFlag struct{ n *int }

func (c countFlag) String() string      { return strconv.Itoa(*c.n) }
func (c countFlag) Set(string) error    { *c.n++; return nil }
func (c countFlag) Type() string        { return "count" }
func (c countFlag) IsBoolFlag() bool    { return true }
func (c countFlag) NoOptDefVal() string { return "true" }

// addGNUCLIFlags adds gnuCLIFlags' options to fs.
func addGNUCLIFlags(fs *pflag.FlagSet, f *runFlags) {
	c := &f.gnuCLI
	fs.StringVar(&c.argSep, "arg-sep", ":::", "use `SEP` instead of ::: (and SEP+ instead of :::+)")
	fs.StringVar(&c.argFileSep, "arg-file-sep", "::::", "use `SEP` instead of :::: (and SEP+ instead of ::::+)")
	fs.BoolVar(&c.shuf, "shuf", false, "run the jobs in random order (every input is read first, and held in memory)")
	fs.BoolVar(&c.useCPUs, "use-cpus-instead-of-cores", false, "accepted: GNU parallel uses it for remote hosts only; ration counts the effective CPUs (ration limits)")
	fs.StringArrayVarP(&c.profiles, "profile", "J", nil, "read options from the profile `NAME` (~/.parallel/NAME, or a path starting with / or ./) before the command line's")
	fs.BoolVarP(&c.version, "version", "V", false, "print ration's version and the GNU parallel version it is compared with, and exit")
	fs.StringVar(&c.minVersion, "minversion", "", "print the GNU parallel version ration is compared with; exit 0 if it is at least `VERSION` (yyyymmdd), else 255")
	fs.BoolVar(&c.maxLineLength, "max-line-length-allowed", false, "print the longest command line the system allows (as GNU parallel measures it) and exit")
	fs.BoolVar(&c.numCPUs, "number-of-cpus", false, "same as --number-of-cores")
	fs.BoolVar(&c.numCores, "number-of-cores", false, "print the number of physical CPU cores (as GNU parallel: within the CPU affinity) and exit")
	fs.BoolVar(&c.numThreads, "number-of-threads", false, "print the number of CPU threads (as GNU parallel: within the CPU affinity) and exit")
	fs.BoolVar(&c.numSockets, "number-of-sockets", false, "print the number of CPU sockets (as GNU parallel) and exit")
	fs.Var(countFlag{&c.shellQuote}, "shellquote", "print each command line quoted for the shell (twice when given twice, ...) instead of running it")
	fs.Lookup("shellquote").NoOptDefVal = "true"
}

// planGNUInfo plans an informational option, in GNU parallel's order of
// precedence; it reports whether one was given (then nothing else is
// planned, as GNU parallel prints and exits before looking at the rest).
func planGNUInfo(p *runPlan, f *runFlags, getenv func(string) string) (bool, error) {
	c := &f.gnuCLI
	// As every plan's, the limits options read the environment given.
	p.limits.Getenv = getenv
	switch {
	case c.numSockets:
		p.cli.info = infoSockets
	case c.numCPUs, c.numCores:
		p.cli.info = infoCores
	case c.numThreads:
		p.cli.info = infoThreads
	case c.maxLineLength:
		p.cli.info = infoMaxLineLength
	case c.version:
		p.cli.info = infoVersion
	case c.minVersion != "":
		v, err := strconv.Atoi(c.minVersion)
		if err != nil || v < 0 {
			return true, flagErr("--minversion", fmt.Errorf("%q is not a version like 20130722", c.minVersion))
		}
		p.cli.info, p.cli.minVersion = infoMinVersion, v
	default:
		return false, nil
	}
	return true, nil
}

// planGNUCLI checks the separators and plans --shuf, --shellquote and
// -j FILE (a -j value that is no number and names a regular file, which
// GNU parallel reads; its one I/O is that check).
func planGNUCLI(p *runPlan, f *runFlags, _ func(string) string) error {
	c := &f.gnuCLI
	switch {
	case c.argSep == "":
		return flagMsg("--arg-sep", "--arg-sep: the separator is empty")
	case c.argFileSep == "":
		return flagMsg("--arg-file-sep", "--arg-file-sep: the separator is empty")
	}
	// With -k too, as GNU parallel: the jobs are numbered in the shuffled
	// order, which -k then keeps.
	p.cli.shuf, p.cli.shellQuote = c.shuf, c.shellQuote
	if c.shellQuote > 0 {
		if p.worker.command != "" {
			return flagMsg("--shellquote", "--shellquote cannot be combined with --worker")
		}
		p.cfg.DryRun, p.bar = true, barOff
	}
	if isJobsFile(f.jobs) {
		p.cli.jobsFile, f.jobs = f.jobs, ""
		if p.worker.command != "" {
			return flagMsg("--jobs", "-j FILE cannot be combined with --worker")
		}
		// The file's value is followed instead (wire).
		p.worker.watch = false
	}
	return nil
}

// runGNUInfo prints what an informational option asks for and returns the
// exit status.
func runGNUInfo(c gnuCLIPlan, stdout io.Writer) int {
	switch c.info {
	case infoVersion:
		fmt.Fprintf(stdout, "ration %s\nGNU parallel compatibility level %d: ration run is compared with GNU parallel %d (see docs/compat.md)\n", version(), gnuLevel, gnuLevel)
	case infoMinVersion:
		fmt.Fprintln(stdout, gnuLevel)
		if gnuLevel < c.minVersion {
			return 255
		}
	case infoMaxLineLength:
		fmt.Fprintln(stdout, gnuinput.MaxLineLength())
	case infoCores, infoThreads, infoSockets:
		cpus := hostCPUs("/sys/devices/system/cpu", affinityCPUs())
		n := map[gnuInfo]int{infoCores: cpus.cores, infoThreads: cpus.threads, infoSockets: cpus.sockets}[c.info]
		fmt.Fprintln(stdout, n)
	}
	return 0
}

// gnuCLIWire applies gnuCLIPlan to the run before the limits
// decision: -j FILE's first value, --shuf's shuffled arguments and
// --shellquote's quoting of every printed command.
func (w *wiring) gnuCLIWire(cfg *runConfig) error {
	c := w.plan.cli
	if c.jobsFile != "" {
		spec, err := readJobsFile(c.jobsFile)
		if err != nil {
			return err
		}
		w.plan.limits.Jobs, w.plan.jobsSpec = spec, spec
	}
	if c.shuf && cfg.GNU.Args != nil {
		cfg.GNU.Args = shuffled(cfg.GNU.Args, rand.Shuffle)
	}
	if c.shellQuote > 0 {
		cfg.Stdout = &shellQuoter{w: cfg.Stdout, times: c.shellQuote}
	}
	return nil
}

// gnuCLIObserve adds the observer of -j FILE to cfg, which resizes the
// run through ref when the file changed as a job ends.
func (w *wiring) gnuCLIObserve(cfg *runConfig, ref *runnerRef) {
	if w.plan.cli.jobsFile == "" {
		return
	}
	jf := &jobsFile{path: w.plan.cli.jobsFile, opts: w.plan.limits, runner: ref, warn: func(msg string) {
		w.say.say(slog.LevelWarn, "ration run: warning: ", msg)
	}}
	if st, err := os.Stat(jf.path); err == nil {
		jf.mtime = st.ModTime()
	}
	cfg.Observer = event.Multi{cfg.Observer, jf}
}

// shellQuoter is --shellquote's stdout: the run prints each command
// (--dry-run's lines, one Write each), and shellQuoter writes it quoted
// for the shell as GNU parallel quotes it, once per --shellquote. A Write
// that ends in a tab is the line's --tag (runner's dry run writes it on
// its own) and is passed as it is, as GNU parallel prints it.
type shellQuoter struct {
	w     io.Writer
	times int
}

func (q *shellQuoter) Write(b []byte) (int, error) {
	if bytes.HasSuffix(b, []byte("\t")) {
		return q.w.Write(b)
	}
	line, nl := strings.CutSuffix(string(b), "\n")
	for range q.times {
		line = template.Quote(line) // GNU parallel's Q
	}
	if nl {
		line += "\n"
	}
	if _, err := io.WriteString(q.w, line); err != nil {
		return 0, err
	}
	return len(b), nil
}
