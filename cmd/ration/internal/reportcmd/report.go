package reportcmd

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/internal/report"
	"github.com/ration-run/ration/limits"
)

// maxReportWarnings is how many skipped joblog lines report names on
// stderr before it only counts them.
const maxReportWarnings = 5

// reportFlags are the flags of `ration report` as the user gave them.
type reportFlags struct {
	help   bool
	out    string
	format string
	cpus   string
	title  string
	args   []string
}

// parseReportFlags parses the arguments of `ration report`; the FlagSet
// prints the help.
func parseReportFlags(args []string) (reportFlags, *pflag.FlagSet, error) {
	var f reportFlags
	fs := pflag.NewFlagSet("ration report", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVarP(&f.out, "output", "o", "", "write to `FILE` instead of stdout; .html, .htm or .svg choose the format")
	fs.StringVar(&f.format, "format", "", "output format, `html|svg` (default: from -o's extension, else html)")
	fs.StringVar(&f.cpus, "cpus", "", "draw the CPU budget line at `N` CPUs; \"auto\" uses this machine's limits (as `ration limits`); default: no line")
	fs.StringVar(&f.title, "title", "", "the report's title, `TEXT` (default: the joblog's file name)")
	fs.BoolVarP(&f.help, "help", "h", false, "show this help")
	err := fs.Parse(args)
	f.args = fs.Args()
	return f, fs, err
}

// Flags returns the flags of `ration report` (for shell completion).
func Flags() *pflag.FlagSet {
	_, fs, _ := parseReportFlags(nil)
	return fs
}

// reportPlan is one `ration report` as decided from its flags.
type reportPlan struct {
	joblog   string // "-" is stdin
	out      string // "" or "-" is stdout
	svg      bool
	cpusAuto bool // --cpus auto: this machine's effective CPUs
	opts     report.Options
}

// planReport checks the flags and returns the plan, or one usage error.
// It does no I/O.
func planReport(f reportFlags) (reportPlan, error) {
	switch len(f.args) {
	case 0:
		return reportPlan{}, errors.New("missing JOBLOG argument (see ration report --help)")
	case 1:
	default:
		return reportPlan{}, fmt.Errorf("unexpected argument %q", f.args[1])
	}
	p := reportPlan{joblog: f.args[0], out: f.out, opts: report.Options{Title: f.title}}
	var err error
	if p.svg, err = reportFormat(f.format, f.out); err != nil {
		return reportPlan{}, err
	}
	if p.opts.Title == "" {
		p.opts.Title = "ration report: " + filepath.Base(p.joblog)
		if p.joblog == "-" {
			p.opts.Title = "ration report"
		}
	}
	p.cpusAuto = f.cpus == "auto"
	if !p.cpusAuto {
		if p.opts.CPUs, err = reportCPUs(f.cpus); err != nil {
			return reportPlan{}, err
		}
	}
	return p, nil
}

// Main implements `ration report JOBLOG [-o FILE] [--format html|svg]
// [--cpus N|auto] [--title TEXT]`: it renders a joblog (ration's or GNU
// parallel's; "-" reads stdin) as a self-contained HTML page or SVG image.
// It reads the joblog twice rather than hold its lines (see package
// report), so stdin that is not a regular file is copied to a temporary
// file first.
//
// The format comes from --format, else from the extension of -o (.html,
// .htm, .svg), else HTML. Without -o the output goes to stdout; with -o it
// is written to a temporary file that replaces FILE only when complete, so
// a failed run never leaves half a report over a previous one. Malformed
// lines are skipped with a warning on stderr (exit 0); a missing or
// unreadable joblog, one without any job line, or a usage error exits 255
// with one line on stderr.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, fs, err := parseReportFlags(args)
	if err != nil {
		return reportError(stderr, err)
	}
	if f.help {
		fmt.Fprintln(stdout, "usage: ration report JOBLOG [-o FILE] [--format html|svg] [--cpus N|auto] [--title TEXT]")
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, "Render a joblog (ration's or GNU parallel's; - for stdin) as a self-contained HTML page")
		fmt.Fprintln(stdout, "or SVG image: jobs on a timeline, concurrency over time, failed and slowest jobs, totals.")
		fmt.Fprintln(stdout)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	p, err := planReport(f)
	if err == nil {
		err = p.render(stdin, stdout, stderr)
	}
	if err != nil {
		return reportError(stderr, err)
	}
	return 0
}

// render reads the joblog, warns about the lines it skipped and writes
// the report. Its errors name the file at fault as the user gave it (the
// joblog, "-o FILE" or "stdout"), once, before the cause.
func (p reportPlan) render(stdin io.Reader, stdout, stderr io.Writer) error {
	if p.cpusAuto {
		d, err := limits.Decide(limits.Options{Getenv: func(string) string { return "" }})
		if err != nil {
			return fmt.Errorf("--cpus auto: %w", err)
		}
		p.opts.CPUs = d.EffectiveCPUs
	}
	in, done, err := openJoblog(p.joblog, stdin)
	if err != nil {
		return err
	}
	defer done()
	run, err := report.Read(in)
	if err != nil {
		return fileErr(p.joblog, err)
	}
	for i, w := range run.Warnings {
		if i == maxReportWarnings {
			break
		}
		fmt.Fprintf(stderr, "ration report: warning: %s: skipped %s\n", p.joblog, oneLine(w))
	}
	if n := run.Skipped - maxReportWarnings; n > 0 {
		fmt.Fprintf(stderr, "ration report: warning: %s: %d more malformed %s skipped\n", p.joblog, n, plural(n, "line", "lines"))
	}
	dest := "stdout"
	if p.out != "" && p.out != "-" {
		dest = "-o " + p.out
	}
	write := func(w io.Writer) error {
		out := &watchedWriter{w: w}
		if p.svg {
			err = run.WriteSVG(out, p.opts)
		} else {
			err = run.WriteHTML(out, p.opts)
		}
		switch {
		case out.err != nil:
			return fileErr(dest, out.err)
		case err != nil: // not the output: the joblog, read again
			return fileErr(p.joblog, err)
		}
		return nil
	}
	if dest == "stdout" {
		err = write(stdout)
	} else {
		err = writeFileAtomic(p.out, write)
	}
	if err != nil && !errors.As(err, new(*namedErr)) {
		err = fileErr(dest, err)
	}
	return err
}

// namedErr is an error about one file, told by the name the user gave it.
type namedErr struct {
	name string
	err  error
}

func (e *namedErr) Error() string { return e.name + ": " + e.err.Error() }
func (e *namedErr) Unwrap() error { return e.err }

// fileErr names the file name in err. The *os.PathError or *os.LinkError
// inside err, if any, gives only its cause: its own name would repeat
// name, or be the temporary file that writeFileAtomic renames.
func fileErr(name string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &namedErr{name, err}
}

// watchedWriter keeps the first error of w, to tell an output that failed
// from a joblog that could not be read again.
type watchedWriter struct {
	w   io.Writer
	err error
}

func (w *watchedWriter) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}

// plural returns one for n == 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// openJoblog opens the joblog at path, "-" being stdin, for report.Read,
// which reads it twice; done releases it. Stdin that is a regular file is
// read in place from its current offset; any other stdin (a pipe) is first
// copied to a temporary file, removed by done.
func openJoblog(path string, stdin io.Reader) (_ io.ReaderAt, done func(), err error) {
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, fileErr(path, err)
		}
		return f, func() { f.Close() }, nil
	}
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if off, err := f.Seek(0, io.SeekCurrent); err == nil {
				return io.NewSectionReader(f, off, math.MaxInt64-off), func() {}, nil
			}
		}
	}
	tmp, err := os.CreateTemp("", "ration-report-*.joblog")
	if err != nil {
		return nil, nil, fmt.Errorf("copy stdin to a temporary file: %w", err)
	}
	done = func() { tmp.Close(); os.Remove(tmp.Name()) }
	if _, err := io.Copy(tmp, stdin); err != nil {
		done()
		return nil, nil, &namedErr{"-", fmt.Errorf("copy to a temporary file: %w", err)}
	}
	return tmp, done, nil
}

// reportFormat decides between SVG (true) and HTML (false).
func reportFormat(format, out string) (svg bool, err error) {
	switch strings.ToLower(format) {
	case "svg":
		return true, nil
	case "html":
		return false, nil
	case "":
	default:
		return false, fmt.Errorf("invalid --format %q (want html or svg)", format)
	}
	if out == "" || out == "-" {
		return false, nil
	}
	switch strings.ToLower(filepath.Ext(out)) {
	case ".svg":
		return true, nil
	case ".html", ".htm":
		return false, nil
	}
	return false, fmt.Errorf("cannot tell the format from %q: name it .html or .svg, or give --format", out)
}

// reportCPUs parses --cpus other than "auto": "" is no budget line.
func reportCPUs(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || v > 1e6 {
		return 0, fmt.Errorf("invalid --cpus value %q (want a positive number or auto)", s)
	}
	return v, nil
}

// writeFileAtomic writes path through a temporary file in the same
// directory and renames it into place once write succeeded.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err = write(f); err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// reportError prints err as one line and returns the usage exit status.
func reportError(stderr io.Writer, err error) int { return fail(stderr, "ration report", err) }
