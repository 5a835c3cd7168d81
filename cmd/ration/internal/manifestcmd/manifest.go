// Package manifestcmd is `ration manifest`: it lists a file set once into
// a manifest file, so that the shards of a run read their byte range of it
// (ration run --manifest FILE --shard I/N) instead of each walking the
// whole set.
//
// It imports runner/input and cmd/ration/internal/cli; it must not import
// another command's package.
package manifestcmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
	"github.com/ration-run/ration/runner/input"
)

// manifestFlags are the flags of `ration manifest`.
type manifestFlags struct {
	files, excludes   []string
	hidden, gitignore bool
	null              bool
	keep              bool
	output            string
	help              bool
}

// Flags are the flags of `ration manifest`, for the completion scripts.
func Flags() *pflag.FlagSet { return newFlagSet(&manifestFlags{}) }

// newFlagSet declares the flags of `ration manifest` into f.
func newFlagSet(f *manifestFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("ration manifest", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringArrayVar(&f.files, "files", nil, "list the files matching the glob `PATTERN` (** any depth; repeatable), as ration run --files")
	fs.StringArrayVar(&f.excludes, "exclude", nil, "leave out files and directories matching `PATTERN`, as ration run --exclude")
	fs.BoolVar(&f.hidden, "hidden", false, "include hidden files and directories")
	fs.BoolVar(&f.gitignore, "gitignore", false, "skip what .gitignore, .ignore and .git/info/exclude ignore, and .git itself")
	fs.BoolVarP(&f.null, "null", "0", false, "separate the paths by NUL, not newline (for paths holding newlines; read with ration run -0)")
	fs.BoolVar(&f.keep, "keep-existing", false, "when FILE exists, keep it and write nothing: a run's manifest is written once (a rewritten one moves inputs between shards)")
	fs.StringVarP(&f.output, "output", "o", "", "write the manifest to `FILE` (- for stdout)")
	fs.BoolVarP(&f.help, "help", "h", false, "show this help")
	return fs
}

// Main is `ration manifest --files PATTERN... -o FILE`: it walks
// the file set once and writes the paths, one per line (NUL-separated
// with -0), to FILE, through a temporary file renamed over it, so that a
// reader never sees half a manifest. `ration run --manifest FILE --shard
// I/N` then reads only shard I's part of it.
func Main(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var f manifestFlags
	fs := newFlagSet(&f)
	if err := fs.Parse(args); err != nil {
		return cli.Fail(stderr, "ration manifest", cli.FlagMsg("", err.Error()))
	}
	if f.help {
		fmt.Fprintln(stdout, "Usage: ration manifest --files PATTERN... -o FILE")
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, "List a file set once into a manifest that shards read their part of (ration run --manifest FILE --shard I/N).")
		fmt.Fprintln(stdout)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	switch {
	case len(f.files) == 0:
		return cli.Fail(stderr, "ration manifest", cli.FlagMsg("--files", "--files PATTERN is required"))
	case f.output == "":
		return cli.Fail(stderr, "ration manifest", cli.FlagMsg("--output", "-o FILE is required (- for stdout)"))
	case fs.NArg() > 0:
		return cli.Fail(stderr, "ration manifest", cli.FlagMsg("", fmt.Sprintf("unexpected argument %q", fs.Arg(0))))
	}
	if f.keep && f.output != "-" {
		if _, err := os.Stat(f.output); err == nil {
			fmt.Fprintf(stderr, "ration manifest: %s exists, kept (--keep-existing)\n", f.output)
			return 0
		}
	}
	start := time.Now()
	n, err := writeManifest(f, stdout, stderr)
	if err != nil {
		return cli.Fail(stderr, "ration manifest", err)
	}
	if f.output != "-" {
		fmt.Fprintf(stderr, "ration manifest: %d files to %s in %s\n", n, f.output, time.Since(start).Round(time.Millisecond))
	}
	return 0
}

// writeManifest walks the files and writes the manifest; it returns how
// many paths it wrote.
func writeManifest(f manifestFlags, stdout, stderr io.Writer) (int, error) {
	sep := byte('\n')
	if f.null {
		sep = 0
	}
	files, err := input.Files(input.FilesOptions{Patterns: f.files, Excludes: f.excludes, Hidden: f.hidden, GitIgnore: f.gitignore,
		Warn: func(err error) { fmt.Fprintf(stderr, "ration manifest: warning: %v\n", cli.FilesError(err)) },
		Skip: skipOutput(f.output)})
	if err != nil {
		return 0, cli.FilesError(err)
	}
	out, commit := stdout, func() error { return nil }
	if f.output != "-" {
		tmp, err := os.CreateTemp(filepath.Dir(f.output), "."+filepath.Base(f.output)+".*")
		if err != nil {
			return 0, err
		}
		defer os.Remove(tmp.Name()) // after a rename: nothing
		out = tmp
		commit = func() error {
			if err := tmp.Sync(); err != nil {
				tmp.Close()
				return err
			}
			if err := tmp.Close(); err != nil {
				return err
			}
			return os.Rename(tmp.Name(), f.output)
		}
	}
	bw := bufio.NewWriterSize(out, 256<<10)
	n := 0
	for p, err := range cli.FilesSeq(files) {
		if err != nil {
			return n, err
		}
		if strings.IndexByte(p, sep) >= 0 {
			return n, errors.New("the path " + fmt.Sprintf("%q", p) + " holds a newline; write a NUL-separated manifest with -0 (and read it with ration run -0)")
		}
		bw.WriteString(p)
		bw.WriteByte(sep)
		n++
	}
	if err := bw.Flush(); err != nil {
		return n, err
	}
	return n, commit()
}

// skipOutput leaves the manifest itself out of the walk.
func skipOutput(path string) []string {
	if path == "-" {
		return nil
	}
	return []string{path}
}
