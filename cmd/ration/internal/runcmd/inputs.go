package runcmd

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
	"github.com/ration-run/ration/internal/flagvalue"
	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
)

// inputFlags are the flags that name the inputs: -a files, --files
// patterns, NUL separators and the shard of them this run takes.
type inputFlags struct {
	argFiles  []string
	null      bool
	files     []string
	excludes  []string
	hidden    bool
	gitignore bool
	shard     string
	manifest  string
}

// addInputFlags adds inputFlags' flags to fs.
func addInputFlags(fs *pflag.FlagSet, g *inputFlags) {
	fs.StringArrayVarP(&g.argFiles, "arg-file", "a", nil, "read inputs from `FILE`, one per line; repeated, the files are combined as ::: groups are (- is stdin)")
	fs.BoolVarP(&g.null, "null", "0", false, "inputs are separated by NUL, not newline")
	fs.StringArrayVar(&g.files, "files", nil, "inputs are the files matching `PATTERN` (** matches directories; repeatable)")
	fs.StringArrayVar(&g.excludes, "exclude", nil, "leave out files and directories matching `PATTERN` (repeatable)")
	fs.BoolVar(&g.hidden, "hidden", false, "--files: include hidden files and directories (names starting with '.'; .git never with --gitignore)")
	fs.BoolVar(&g.gitignore, "gitignore", false, "--files: skip what .gitignore, .ignore and .git/info/exclude ignore, and .git itself")
	fs.StringVar(&g.manifest, "manifest", "", "read the inputs from the manifest `FILE` (one per line, or NUL-separated with -0; `ration manifest` writes one); with --shard I/N (or RATION_SHARD_COUNT), read only shard I's byte range of it")
	fs.StringVar(&g.shard, "shard", "", "run only shard `I/N` of the inputs (default from JOB_COMPLETION_INDEX when RATION_SHARD_COUNT=N)")
}

// inputKind is where the inputs come from.
type inputKind int

const (
	inputStdin    inputKind = iota // standard input
	inputSources                   // ::: groups, :::: files and -a files
	inputFiles                     // --files PATTERN...
	inputManifest                  // --manifest FILE
)

// sourcePlan is one input source as given on the command line.
type sourcePlan struct {
	// name says where the values come from in errors: ":::", ":::+",
	// ":::: FILE", "::::+ FILE", "-a FILE".
	name string
	// args are a ::: group's values; path is a file's (:::: and -a), "-"
	// for stdin.
	args []string
	path string
	// linked is :::+ or ::::+: paired with the source before it.
	linked bool
}

// inputPlan says where the inputs come from and how they are read.
type inputPlan struct {
	kind inputKind
	// sources are the -a files, then the ::: groups and :::: files in
	// order (inputSources).
	sources []sourcePlan
	// delim ends every value read from a file or stdin ("\n"; "\x00"
	// with -0; -d's); eof is -E.
	delim, eof string
	// lines is -L: a line ending in a blank continues on the next one.
	lines bool
	// noEmpty is -r: values of blanks only are left out.
	noEmpty bool
	// How the sources are combined and split into fields (gnuinput.Options;
	// colsep is compiled by wire).
	link, header bool
	colsep       string
	colsepSet    bool // --colsep given: "" splits every character
	trim         gnuinput.Trim
	patterns     []string // inputFiles
	manifest     string   // inputManifest
	excludes     []string // inputFiles
	// hidden and gitignore are --hidden and --gitignore (inputFiles).
	hidden, gitignore bool
	// pipe, when set, cuts stdin into blocks, each one a job's stdin
	// (--pipe).
	pipe *gnuinput.BlockOptions
	// pipeMode is --pipepart or --round-robin (see
	// gnu_pipe.go); nil for neither.
	pipeMode *pipeModePlan
	// total is the number of jobs this shard runs when known in advance
	// (one ::: group, one argument per job), else -1.
	total int64
	// skipFirst: the first source read from a file or stdin (with --pipe:
	// stdin) loses its first record (--skip-first-line; firstReader).
	skipFirst bool
}

// given reports whether the inputs are named on the command line (so a
// resumed run needs no standard input).
func (in inputPlan) given() bool {
	if in.kind == inputStdin {
		return false
	}
	for _, s := range in.sources {
		if s.path == "-" {
			return false
		}
	}
	return true
}

// planShard takes the shard from --shard, or else from
// JOB_COMPLETION_INDEX when RATION_SHARD_COUNT is set (an Indexed Job of
// Kubernetes). JOB_COMPLETION_INDEX alone is refused: Kubernetes does not
// tell a pod the number of indexes, and without it every pod would run
// every input; --shard 0/1 says that is meant.
func planShard(p *runPlan, f *runFlags, getenv func(string) string) error {
	var err error
	if f.shard != "" {
		if p.cfg.Shard, err = flagvalue.ParseShard(f.shard); err != nil {
			return flagErr("--shard", err)
		}
		return nil
	}
	n, i := getenv("RATION_SHARD_COUNT"), getenv("JOB_COMPLETION_INDEX")
	if n == "" {
		if i != "" {
			return flagMsg("RATION_SHARD_COUNT", fmt.Sprintf("JOB_COMPLETION_INDEX=%s is set but RATION_SHARD_COUNT is not: "+
				"every pod of the Indexed Job would run every input; set RATION_SHARD_COUNT to the Job's completions, "+
				"or give --shard 0/1 to run every input in this pod", i))
		}
		return nil
	}
	if i == "" {
		return flagMsg("JOB_COMPLETION_INDEX", fmt.Sprintf("RATION_SHARD_COUNT=%s is set but JOB_COMPLETION_INDEX is not", n))
	}
	if p.cfg.Shard, err = flagvalue.NewShard(i, n); err != nil {
		return flagErr("JOB_COMPLETION_INDEX/RATION_SHARD_COUNT", err)
	}
	return nil
}

// planInput chooses where the inputs come from: ::: groups, :::: and -a
// files (combined as GNU parallel does), --files patterns, or standard
// input, and how they are read.
func planInput(p *runPlan, f *runFlags, _ func(string) string) error {
	in := &p.input
	in.delim, in.total = "\n", -1
	var argFiles []sourcePlan
	for _, a := range f.argFiles {
		argFiles = append(argFiles, sourcePlan{name: "-a " + a, path: a})
	}
	in.sources = append(argFiles, in.sources...)
	switch {
	case len(f.files) > 0 && len(in.sources) > 0:
		return flagMsg("--files", "--files=PATTERN cannot be combined with :::, :::: or -a (ration's --files PATTERN names the input files by glob; GNU parallel's --files, print the output file names, is --output-files, and a bare --files before the command and such inputs is read so)")
	case len(f.files) > 0 && p.cfg.GNU.InputIsCommand:
		return flagMsg("--files", fmt.Sprintf("--files=%s takes a glob PATTERN and a command after it (GNU parallel's --files, print the output file names, is --output-files)", f.files[0]))
	case len(f.excludes) > 0 && len(f.files) == 0:
		return flagMsg("--exclude", "--exclude needs --files")
	case f.hidden && len(f.files) == 0:
		return flagMsg("--hidden", "--hidden needs --files")
	case f.gitignore && len(f.files) == 0:
		return flagMsg("--gitignore", "--gitignore needs --files")
	case f.manifest != "" && (len(f.files) > 0 || len(in.sources) > 0 || p.cfg.GNU.InputIsCommand):
		return flagMsg("--manifest", "--manifest FILE is the input: it cannot be combined with --files, :::, :::: or -a, and needs a command")
	}
	stdin := 0
	for _, s := range in.sources {
		if s.path == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return flagMsg("", "standard input is named twice as an input source (-a - or :::: -)")
	}
	switch {
	case len(in.sources) > 0:
		in.kind = inputSources
	case len(f.files) > 0:
		in.kind, in.patterns, in.excludes = inputFiles, f.files, f.excludes
		in.hidden, in.gitignore = f.hidden, f.gitignore
	case f.manifest != "":
		in.kind, in.manifest = inputManifest, f.manifest
	}
	return planReading(p, f)
}

// inputs opens the inputs of the plan into cfg (GNU.Args, and the
// --header names the command's template takes). A file that cannot be
// opened, or an error reading a source read whole, is an input error
// before any job runs.
func (w *wiring) inputs(cfg *runConfig, stdin io.Reader) error {
	in := w.plan.input
	if in.pipe != nil {
		stdin = in.firstReader(stdin) // --skip-first-line
	}
	if in.pipeMode != nil {
		return w.pipeModeInputs(cfg, stdin) // gnu_pipe_wire.go
	}
	warnNUL := func() {
		w.say.say(slog.LevelWarn, "ration run: warning: ", "an input value holds a NUL byte, replaced by \\0 (did you mean -0?)")
	}
	split := gnuinput.SplitOptions{Delim: in.delim, EOF: in.eof, NUL: warnNUL}
	values := func(r io.Reader) input.Seq {
		return gnuinput.Lines(gnuinput.Split(r, split), in.lines, in.noEmpty)
	}
	var srcs []gnuinput.Source
	switch in.kind {
	case inputStdin:
		var v input.Seq
		if in.pipe != nil {
			v = gnuinput.Blocks(stdin, *in.pipe)
		} else {
			v = values(in.firstReader(stdin))
		}
		srcs = append(srcs, gnuinput.Source{Name: "stdin", Values: v})
	case inputFiles:
		files, err := input.Files(input.FilesOptions{
			Patterns:  in.patterns,
			Excludes:  in.excludes,
			Hidden:    in.hidden,
			GitIgnore: in.gitignore,
			Warn:      func(err error) { w.say.say(slog.LevelWarn, "ration run: warning: ", cli.FilesError(err).Error()) },
			Skip:      ownOutput(cfg),
		})
		if err != nil {
			return cli.FilesError(err)
		}
		srcs = append(srcs, gnuinput.Source{Values: cli.FilesSeq(files)}) // its errors name --files and the pattern
	case inputManifest:
		srcs = append(srcs, gnuinput.Source{Name: "--manifest", Values: manifestShard(cfg, &in)})
	}
	for i, s := range in.sources {
		src := gnuinput.Source{Name: s.name, Linked: s.linked}
		read := values
		if i == 0 {
			read = func(r io.Reader) input.Seq { return values(in.firstReader(r)) }
		}
		switch {
		case s.path == "-":
			src.Values = read(stdin)
		case s.path != "":
			// Opened once, here: a FIFO's writer must not be cut off by a
			// second open. The source closes it at its end.
			fh, err := os.Open(s.path)
			if err != nil {
				return fmt.Errorf("%s: %v", s.name, unwrapPathErr(err))
			}
			src.Values = openedInput(fh, s.path, read)
		default:
			src.Values = gnuinput.Lines(gnuinput.Until(input.Args(s.args), in.eof), in.lines, in.noEmpty)
		}
		srcs = append(srcs, src)
	}
	opts := gnuinput.Options{Link: in.link, Header: in.header, Trim: in.trim}
	if in.colsepSet {
		opts.ColSep = regexp.MustCompile(in.colsep) // checked by plan
	}
	args, err := gnuinput.Open(srcs, opts)
	if err != nil {
		return fmt.Errorf("%w: %w", runner.ErrInput, err)
	}
	w.args = args
	cfg.GNU.Args = args.All()
	cfg.GNU.Template.Names = args.Names()
	return nil
}
