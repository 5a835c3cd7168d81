package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner/report"
	"github.com/spf13/pflag"
)

// maxReportWarnings is how many skipped joblog lines report names on
// stderr before it only counts them.
const maxReportWarnings = 5

// cmdReport implements `ration report JOBLOG [-o FILE] [--format html|svg]
// [--cpus N|auto] [--title TEXT]`: it renders a joblog (ration's or GNU
// parallel's; "-" reads stdin) as a self-contained HTML page or SVG image.
//
// The format comes from --format, else from the extension of -o (.html,
// .htm, .svg), else HTML. Without -o the output goes to stdout; with -o it
// is written to a temporary file that replaces FILE only when complete, so
// a failed run never leaves half a report over a previous one. Malformed
// lines are skipped with a warning on stderr (exit 0); a missing or
// unreadable joblog, one without any job line, or a usage error exits 255
// with one line on stderr.
func cmdReport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("ration report", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.StringP("output", "o", "", "write to `FILE` instead of stdout; .html, .htm or .svg choose the format")
	format := fs.String("format", "", "output format: html or svg (default: from -o's extension, else html)")
	cpus := fs.String("cpus", "", "draw the CPU budget line at `N` CPUs; \"auto\" uses this machine's limits (as `ration limits`); default: no line")
	title := fs.String("title", "", "title of the report (default: the joblog's file name)")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return reportError(stderr, err)
	}
	if *help {
		fmt.Fprintln(stdout, "usage: ration report JOBLOG [-o FILE] [--format html|svg] [--cpus N|auto] [--title TEXT]")
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, "Render a joblog (ration's or GNU parallel's; - for stdin) as a self-contained HTML page")
		fmt.Fprintln(stdout, "or SVG image: jobs on a timeline, concurrency over time, failed and slowest jobs, totals.")
		fmt.Fprintln(stdout)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	switch fs.NArg() {
	case 0:
		return reportError(stderr, errors.New("missing JOBLOG argument (see ration report --help)"))
	case 1:
	default:
		return reportError(stderr, fmt.Errorf("unexpected argument %q", fs.Arg(1)))
	}
	logPath := fs.Arg(0)

	svg, err := reportFormat(*format, *out)
	if err != nil {
		return reportError(stderr, err)
	}
	opts := report.Options{Title: *title}
	if opts.Title == "" {
		opts.Title = "ration report: " + filepath.Base(logPath)
		if logPath == "-" {
			opts.Title = "ration report"
		}
	}
	if opts.CPUs, err = reportCPUs(*cpus); err != nil {
		return reportError(stderr, err)
	}

	in := stdin
	if logPath != "-" {
		f, err := os.Open(logPath)
		if err != nil {
			return reportError(stderr, err)
		}
		defer f.Close()
		in = f
	}
	run, err := report.Read(in)
	if err != nil {
		if errors.Is(err, report.ErrNoEntries) {
			err = fmt.Errorf("%s: %s", logPath, strings.TrimPrefix(err.Error(), "report: "))
		}
		return reportError(stderr, err)
	}
	for i, w := range run.Warnings {
		if i == maxReportWarnings {
			break
		}
		fmt.Fprintf(stderr, "ration report: warning: %s: skipped %s\n", logPath, oneLine(w))
	}
	if run.Skipped > maxReportWarnings {
		fmt.Fprintf(stderr, "ration report: warning: %s: %d more malformed lines skipped\n", logPath, run.Skipped-maxReportWarnings)
	}

	write := func(w io.Writer) error {
		if svg {
			return run.WriteSVG(w, opts)
		}
		return run.WriteHTML(w, opts)
	}
	if *out == "" || *out == "-" {
		if err := write(stdout); err != nil {
			return reportError(stderr, err)
		}
		return 0
	}
	if err := writeFileAtomic(*out, write); err != nil {
		return reportError(stderr, err)
	}
	return 0
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

// reportCPUs parses --cpus: "" is no budget line, "auto" this machine's
// effective CPUs.
func reportCPUs(s string) (float64, error) {
	switch s {
	case "":
		return 0, nil
	case "auto":
		d, err := limits.Decide(limits.Options{Getenv: func(string) string { return "" }})
		if err != nil {
			return 0, err
		}
		return d.EffectiveCPUs, nil
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
func reportError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "ration report: %s\n", oneLine(err.Error()))
	return exitUsage
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
