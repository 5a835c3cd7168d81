package input

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFilesBracketNegation: "[!...]" in a --files or --exclude pattern is
// a negated class, as in a shell (and in .gitignore, which ration already
// read so). It was path.Match's class of "!" and the rest: "[!a]*.txt"
// matched a.txt and !x.txt, the opposite of what the shell gives.
func TestFilesBracketNegation(t *testing.T) {
	mktree(t, "a.txt", "b.txt", "!x.txt", "d/a.txt", "d/c.txt")
	for _, c := range []struct {
		pats, excl, want []string
	}{
		{[]string{"[!a]*.txt"}, nil, []string{"!x.txt", "b.txt"}},
		{[]string{"**/[!a!]*"}, nil, []string{"b.txt", "d/c.txt"}},
		{[]string{`[\!a]*.txt`}, nil, []string{"!x.txt", "a.txt"}},
		{[]string{"**/*.txt"}, []string{"[!a]*"}, []string{"a.txt"}},
		{[]string{"**/*.txt"}, []string{"d/[!c]*"}, []string{"!x.txt", "a.txt", "b.txt", "d/c.txt"}},
	} {
		s, err := Files(FilesOptions{Patterns: c.pats, Excludes: c.excl, Warn: func(err error) { t.Error(err) }})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := collectErr(s); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q minus %q: got %q (%v), want %q", c.pats, c.excl, got, err, c.want)
		}
	}
}

// TestFilesSameFileTwoSpellings: a file that two patterns match runs once
// also when they spell its path differently (absolute and relative, or
// through ..), as the README promises. It ran once per spelling.
func TestFilesSameFileTwoSpellings(t *testing.T) {
	dir := mktree(t, "d/a.txt", "d/b.txt", "e/c.txt")
	for _, c := range []struct {
		chdir      string
		pats, want []string
	}{
		{"", []string{dir + "/d/*.txt", "d/a.txt", "**/*.txt"}, []string{dir + "/d/a.txt", dir + "/d/b.txt", "e/c.txt"}},
		{"", []string{"d/a.txt", dir + "/**/*.txt"}, []string{"d/a.txt", dir + "/d/b.txt", dir + "/e/c.txt"}},
		{"d", []string{"../d/a.txt", "*.txt", dir + "/d"}, []string{"../d/a.txt", "b.txt"}},
		{"e", []string{"../**/*.txt", "c.txt", "/" + dir[1:] + "/e/../d/b.txt"}, []string{"../d/a.txt", "../d/b.txt", "../e/c.txt"}},
	} {
		if c.chdir != "" {
			t.Chdir(filepath.Join(dir, c.chdir))
		} else {
			t.Chdir(dir)
		}
		s, err := Files(FilesOptions{Patterns: c.pats, Warn: func(err error) { t.Errorf("%q: %v", c.pats, err) }})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := collectErr(s); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("in %s/%s, %q: got %q (%v), want %q", dir, c.chdir, c.pats, got, err, c.want)
		}
	}
}

// TestFilesDanglingLinkWarnsWhenWanted: a symbolic link that leads
// nowhere is a warning only when the pattern could match it; --files
// 'q.txt' (or 'src') warned about every dangling link of the directory it
// read, whatever its name.
func TestFilesDanglingLinkWarnsWhenWanted(t *testing.T) {
	mktree(t, "q.txt", "src/a.go")
	for _, l := range []string{"gone.md", "src/gone.go", "nodir"} {
		if err := os.Symlink("/nonexistent/ration-test", l); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		pats  []string
		excl  []string
		warns []string // the links warned about
	}{
		{[]string{"q.txt"}, nil, nil},
		{[]string{"*.txt"}, nil, nil},
		{[]string{"src"}, nil, []string{"src/gone.go"}},
		{[]string{"**/*.go"}, nil, []string{"src/gone.go"}},
		{[]string{"**/*.go"}, []string{"gone.*"}, nil},
		{[]string{"*"}, nil, []string{"gone.md", "nodir"}},
		{[]string{"nodir/**"}, nil, nil}, // the base: stat'ed by Files itself
	} {
		var warned []string
		s, err := Files(FilesOptions{Patterns: c.pats, Excludes: c.excl, Warn: func(err error) {
			for _, l := range []string{"gone.md", "src/gone.go", "nodir"} {
				if strings.Contains(err.Error(), "stat "+l+":") {
					warned = append(warned, l)
				}
			}
		}})
		if err != nil {
			continue // "nodir/**": its base does not exist
		}
		collectErr(s)
		if !slices.Equal(warned, c.warns) {
			t.Errorf("%q minus %q: warned about %q, want %q", c.pats, c.excl, warned, c.warns)
		}
	}
}

// TestFilesSkipOwnOutput: the paths in Skip (the run's joblog and
// --results directory) are left out of the walk, under any spelling,
// with one warning each.
func TestFilesSkipOwnOutput(t *testing.T) {
	dir := mktree(t, "data/a.txt", "data/jl", "data/res/1/a/stdout", "data/z.txt", "other/jl")
	var warns []string
	s, err := Files(FilesOptions{Patterns: []string{"data", "other"}, Skip: []string{dir + "/data/jl", "data/./res"},
		Warn: func(err error) { warns = append(warns, err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := collectErr(s); err != nil || !slices.Equal(got, []string{"data/a.txt", "data/z.txt", "other/jl"}) {
		t.Errorf("got %q (%v)", got, err)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "left out data/jl") || !strings.Contains(warns[1], "left out data/res") {
		t.Errorf("warnings %q, want one for data/jl and one for data/res", warns)
	}
}
