package cli

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ration-run/ration/runner/input"
)

// TestFilesError: the errors and warnings of input.Files, which name no
// flag, read as ration has always printed them: with --files, --exclude
// and --hidden named, and still wrapping what they wrapped.
func TestFilesError(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.go", ".hidden/b.py", "c.rs", "data/jl", "gen/x.log"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("gen/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	run := func(opts input.FilesOptions) (warns []string, err error) {
		opts.Warn = func(err error) { warns = append(warns, FilesError(err).Error()) }
		s, err := input.Files(opts)
		if err != nil {
			return warns, FilesError(err)
		}
		for _, err := range FilesSeq(s) {
			if err != nil {
				return warns, err
			}
		}
		return warns, nil
	}
	for _, c := range []struct {
		opts  input.FilesOptions
		warns []string
		err   string
		is    error
	}{
		{opts: input.FilesOptions{Patterns: []string{"**/*.go", "**/*.java"}},
			warns: []string{"--files **/*.java: no file matches; 1 hidden path not walked (--hidden walks them)"}},
		{opts: input.FilesOptions{Patterns: []string{"**/*.py", "*.java"}},
			err: "--files **/*.py: no file matches; 1 hidden path not walked (--hidden walks them)\n--files *.java: no file matches", is: input.ErrNoMatch},
		{opts: input.FilesOptions{Patterns: []string{"**/*.log"}, GitIgnore: true},
			err: "--files **/*.log: no file matches; 1 hidden path not walked (--hidden walks them), 1 path not walked as .gitignore or .ignore says", is: input.ErrNoMatch},
		{opts: input.FilesOptions{Patterns: []string{"gen/*.txt"}, Hidden: true, GitIgnore: true},
			err: "--files gen/*.txt: no file matches", is: input.ErrNoMatch},
		{opts: input.FilesOptions{Patterns: []string{"nodir/*.go"}},
			err: "--files nodir/*.go: stat nodir: no such file or directory", is: os.ErrNotExist},
		{opts: input.FilesOptions{Patterns: []string{"*.go"}, Excludes: []string{"[x"}},
			err: `--exclude: bad pattern: "[x"`, is: input.ErrBadPattern},
		{opts: input.FilesOptions{Patterns: []string{"[x"}},
			err: `bad pattern: "[x"`, is: input.ErrBadPattern},
		{opts: input.FilesOptions{Patterns: []string{"data"}, Skip: []string{"data/jl"}},
			warns: []string{"--files: left out data/jl: it is data/jl, written by this run"}, err: "--files data: no file matches", is: input.ErrNoMatch},
	} {
		warns, err := run(c.opts)
		if !slices.Equal(warns, c.warns) {
			t.Errorf("%+v: warnings %q, want %q", c.opts, warns, c.warns)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%+v: error %q, want none", c.opts, err)
		case c.err != "" && (err == nil || err.Error() != c.err || !errors.Is(err, c.is)):
			t.Errorf("%+v: error %v, want %q wrapping %v", c.opts, err, c.err, c.is)
		}
	}
	if err := FilesError(errors.New("other")); err.Error() != "other" {
		t.Errorf("an error not of input.Files: %q, want it as it is", err)
	}
}
