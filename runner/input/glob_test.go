package input

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func mktree(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return dir
}

func TestFiles(t *testing.T) {
	mktree(t, "a.go", "b.txt", "src/z.go", "src/a_test.go", "src/x/y/deep.go", "src/x/y/deep.c",
		"src/gen/g.go", "node_modules/m.go", "src/node_modules/n.go", "empty/", "b c/it's.go")
	if err := os.Symlink("src", "link"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.go", "alink.go"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		pats, excl []string
		want       []string
	}{
		{[]string{"*.go"}, nil, []string{"a.go", "alink.go"}},
		{[]string{"src/**/*.go"}, nil, []string{"src/a_test.go", "src/gen/g.go", "src/node_modules/n.go", "src/x/y/deep.go", "src/z.go"}},
		{[]string{"**/*.go"}, []string{"node_modules", "src/gen/**", "*_test.go"}, []string{"a.go", "alink.go", "b c/it's.go", "src/x/y/deep.go", "src/z.go"}},
		{[]string{"src/x"}, nil, []string{"src/x/y/deep.c", "src/x/y/deep.go"}},
		{[]string{"./src//z.go", "src/*.go"}, nil, []string{"src/z.go", "src/a_test.go"}},
		{[]string{"src/*/y/*.c"}, nil, []string{"src/x/y/deep.c"}},
		{[]string{"**/*.{c,go}"}, []string{"node_modules", "src/{gen,x}"}, []string{"a.go", "alink.go", "b c/it's.go", "src/a_test.go", "src/z.go"}},
		{[]string{"src/{x/y/*.c,z.go}"}, nil, []string{"src/x/y/deep.c", "src/z.go"}},
		{[]string{"{src,nope}/*.go"}, nil, []string{"src/a_test.go", "src/z.go"}},
		// Matching nothing ends the sequence with ErrNoMatch.
		{[]string{"empty/**"}, nil, nil},
		{[]string{"a.go/*"}, nil, nil},
	}
	for _, c := range cases {
		s, err := Files(FilesOptions{Patterns: c.pats, Excludes: c.excl, Warn: func(err error) { t.Error(err) }})
		if err != nil {
			t.Fatal(err)
		}
		got, err := collectErr(s)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q minus %q: got %q, want %q", c.pats, c.excl, got, c.want)
		}
		if (c.want == nil) != errors.Is(err, ErrNoMatch) {
			t.Errorf("%q minus %q: error %v", c.pats, c.excl, err)
		}
	}
	if _, err := Files(FilesOptions{Patterns: []string{"src/[a"}}); !errors.Is(err, ErrBadPattern) {
		t.Errorf("bad pattern: %v", err)
	}
	if _, err := Files(FilesOptions{Patterns: []string{"nope/**"}}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing base: %v", err)
	}
}

// TestFilesLazy checks that the walk yields the first file before it reads
// the directories after it: a directory made unreadable after the first
// file arrives must still be reported when the walk reaches it.
func TestFilesLazy(t *testing.T) {
	dir := mktree(t, "a/1", "b/2")
	s, err := Files(FilesOptions{Patterns: []string{"**"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for v, err := range s {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
		if v == "a/1" {
			os.WriteFile(filepath.Join(dir, "b", "0"), nil, 0o644)
		}
	}
	if !slices.Equal(got, []string{"a/1", "b/0", "b/2"}) {
		t.Errorf("got %q: the walk read b/ before it yielded a/1", got)
	}
}

func TestAbsolute(t *testing.T) {
	dir := mktree(t, "d/x.csv", "d/y.txt")
	s, err := Files(FilesOptions{Patterns: []string{dir + "/**/*.csv"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(t, s); !slices.Equal(got, []string{dir + "/d/x.csv"}) {
		t.Errorf("got %q", got)
	}
}

// collectErr collects the values of s and the error that ends it.
func collectErr(s Seq) (out []string, err error) {
	for v, err := range s {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

func TestExpandBraces(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"**/*.{go,py}", []string{"**/*.go", "**/*.py"}},
		{"{a,b}{1,2}", []string{"a1", "a2", "b1", "b2"}},
		{"x{a,{b,c}d}y", []string{"xay", "xbdy", "xcdy"}},
		{"{a,}z", []string{"az", "z"}},
		{"{a}", []string{"{a}"}},
		{"{a,b", []string{"{a,b"}},
		{`\{a,b}`, []string{`\{a,b}`}},
		{"{a}{b,c}", []string{"{a}b", "{a}c"}},
		{"{x,y}/{a{1,2},b}", []string{"x/a1", "x/a2", "x/b", "y/a1", "y/a2", "y/b"}},
		{"plain", []string{"plain"}},
	} {
		if got := expandBraces(c.in); !slices.Equal(got, c.want) {
			t.Errorf("expandBraces(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if _, err := Files(FilesOptions{Patterns: []string{strings.Repeat("{a,b}", 11)}}); !errors.Is(err, ErrBadPattern) {
		t.Errorf("2048 alternatives: %v", err)
	}
}

// TestFilesHidden: hidden files and directories are skipped unless a
// pattern element names them or Hidden is set; "**" does not cross them.
func TestFilesHidden(t *testing.T) {
	mktree(t, "a.go", ".env", ".gitignore", ".git/config", ".git/objects/ab/cdef", ".github/workflows/ci.yml",
		"src/a.go", "src/.cache/x.go", "src/.hidden.go")
	cases := []struct {
		pats   []string
		hidden bool
		want   []string
	}{
		{[]string{"**/*"}, false, []string{"a.go", "src/a.go"}},
		{[]string{"."}, false, []string{"a.go", "src/a.go"}},
		{[]string{"*"}, false, []string{"a.go"}},
		{[]string{"src"}, false, []string{"src/a.go"}},
		{[]string{".*"}, false, []string{".env", ".gitignore"}},
		{[]string{".github/**"}, false, []string{".github/workflows/ci.yml"}},
		{[]string{"**/.cache/*.go"}, false, []string{"src/.cache/x.go"}},
		{[]string{"**/.*.go"}, false, []string{"src/.hidden.go"}},
		{[]string{"**/.env"}, false, []string{".env"}},
		{[]string{"**/*"}, true, []string{".env", ".git/config", ".git/objects/ab/cdef", ".github/workflows/ci.yml", ".gitignore", "a.go",
			"src/.cache/x.go", "src/.hidden.go", "src/a.go"}},
	}
	for _, c := range cases {
		s, err := Files(FilesOptions{Patterns: c.pats, Hidden: c.hidden, Warn: func(err error) { t.Error(err) }})
		if err != nil {
			t.Fatal(err)
		}
		if got := collect(t, s); !slices.Equal(got, c.want) {
			t.Errorf("%q hidden=%v: got %q, want %q", c.pats, c.hidden, got, c.want)
		}
	}
}

// TestFilesGitIgnore walks a repository with ignore files at several
// levels, from its root and from a subdirectory.
func TestFilesGitIgnore(t *testing.T) {
	dir := mktree(t, ".git/HEAD", ".git/info/exclude", "a.go", "x.log", "keep.log", "build/out.go", "sub/build/y.go",
		"top.txt", "sub/top.txt", "sub/local.txt", "local.txt", "secret1", "sub/x.log", "sub/ok.go", "excl.txt")
	for name, text := range map[string]string{
		".gitignore":        "# build output\n*.log\n!keep.log\nbuild/\n/top.txt\n",
		"sub/.gitignore":    "local.txt\n",
		".ignore":           "secret*\n",
		".git/info/exclude": "excl.txt\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := func(hidden bool, pats ...string) []string {
		t.Helper()
		s, err := Files(FilesOptions{Patterns: pats, GitIgnore: true, Hidden: hidden, Warn: func(err error) { t.Error(err) }})
		if err != nil {
			t.Fatal(err)
		}
		return collect(t, s)
	}
	want := []string{"a.go", "keep.log", "local.txt", "sub/ok.go", "sub/top.txt"}
	if got := files(false, "**/*"); !slices.Equal(got, want) {
		t.Errorf("**/*: got %q, want %q", got, want)
	}
	// With Hidden the ignore files themselves show, but never .git.
	want = []string{".gitignore", ".ignore", "a.go", "keep.log", "local.txt", "sub/.gitignore", "sub/ok.go", "sub/top.txt"}
	if got := files(true, "**/*"); !slices.Equal(got, want) {
		t.Errorf("**/* hidden: got %q, want %q", got, want)
	}
	// A directory named by the pattern is walked although ignored.
	if got := files(false, "build/**"); !slices.Equal(got, []string{"build/out.go"}) {
		t.Errorf("build/**: got %q", got)
	}
	// From a subdirectory the rules of the directories above apply.
	t.Chdir(filepath.Join(dir, "sub"))
	if got := files(false, "**/*"); !slices.Equal(got, []string{"ok.go", "top.txt"}) {
		t.Errorf("**/* in sub: got %q", got)
	}
	// Without GitIgnore everything that is not hidden is walked.
	s, err := Files(FilesOptions{Patterns: []string{"**/*"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(t, s); len(got) != 5 {
		t.Errorf("**/* in sub without GitIgnore: %q", got)
	}
}

// TestFilesNoMatch: a pattern that matches nothing is a warning naming it
// while another matched, and an error naming all when none did, with a
// hint when hidden or ignored paths would have matched.
func TestFilesNoMatch(t *testing.T) {
	mktree(t, "a.go", ".hidden/b.py", "c.rs")
	var warnErrs []error
	run := func(opts FilesOptions) (got []string, warns []string, err error) {
		warnErrs = nil
		opts.Warn = func(err error) { warnErrs = append(warnErrs, err); warns = append(warns, err.Error()) }
		s, ferr := Files(opts)
		if ferr != nil {
			t.Fatal(ferr)
		}
		got, err = collectErr(s)
		return got, warns, err
	}
	got, warns, err := run(FilesOptions{Patterns: []string{"**/*.go", "**/*.java", "*.rs"}})
	if err != nil || !slices.Equal(got, []string{"a.go", "c.rs"}) || !slices.Equal(warns, []string{"pattern **/*.java: no file matches; 1 hidden path not walked"}) {
		t.Errorf("one of three matched nothing: got %q, warnings %q, error %v", got, warns, err)
	}
	var pe *PatternError
	if len(warnErrs) != 1 || !errors.As(warnErrs[0], &pe) || *pe != (PatternError{Pattern: "**/*.java", Hidden: 1, Err: ErrNoMatch}) {
		t.Errorf("one of three matched nothing: warning %#v, want a *PatternError for **/*.java with 1 hidden path", warnErrs)
	}
	got, warns, err = run(FilesOptions{Patterns: []string{"**/*.py", "*.java"}})
	if !errors.Is(err, ErrNoMatch) || len(got) != 0 || len(warns) != 0 ||
		err.Error() != "pattern **/*.py: no file matches; 1 hidden path not walked\npattern *.java: no file matches" {
		t.Errorf("none matched: got %q, warnings %q, error %q", got, warns, err)
	}
	if j, ok := err.(interface{ Unwrap() []error }); !ok || len(j.Unwrap()) != 2 ||
		!errors.As(j.Unwrap()[1], &pe) || *pe != (PatternError{Pattern: "*.java", Err: ErrNoMatch}) {
		t.Errorf("none matched: error %#v, want one *PatternError a pattern", err)
	}
	if got, _, err := run(FilesOptions{Patterns: []string{"**/*.py"}, Hidden: true}); err != nil || !slices.Equal(got, []string{".hidden/b.py"}) {
		t.Errorf("with Hidden: got %q, error %v", got, err)
	}
}
