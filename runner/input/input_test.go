package input

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func collect(t *testing.T, s Seq) []string {
	t.Helper()
	var out []string
	for v, err := range s {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestReader(t *testing.T) {
	cases := []struct {
		in   string
		sep  byte
		want []string
	}{
		{"a\nb\n", '\n', []string{"a", "b"}},
		{"a\n\nb", '\n', []string{"a", "", "b"}},
		{"", '\n', nil},
		{"a b\x00c\nd\x00", 0, []string{"a b", "c\nd"}},
		{strings.Repeat("x", 200000) + "\ny", '\n', []string{strings.Repeat("x", 200000), "y"}},
	}
	for _, c := range cases {
		got := collect(t, Reader(iotest.OneByteReader(strings.NewReader(c.in)), c.sep))
		if !slices.Equal(got, c.want) {
			t.Errorf("%.20q: got %d records %.40q, want %.40q", c.in, len(got), got, c.want)
		}
	}
	// A read error is yielded last, after the records before it.
	r := iotest.TimeoutReader(strings.NewReader("a\nb\nc"))
	var got []string
	var last error
	for v, err := range Reader(r, '\n') {
		if err != nil {
			last = err
			break
		}
		got = append(got, v)
	}
	if !errors.Is(last, iotest.ErrTimeout) {
		t.Errorf("error %v, want ErrTimeout (records %q)", last, got)
	}
}

func TestFileMissing(t *testing.T) {
	for _, err := range File(filepath.Join(t.TempDir(), "nope"), '\n') {
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("got %v", err)
		}
	}
}

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
		{[]string{"empty/**"}, nil, nil},
		{[]string{"a.go/*"}, nil, nil},
	}
	for _, c := range cases {
		s, err := Files(FilesOptions{Patterns: c.pats, Excludes: c.excl, Warn: func(err error) { t.Error(err) }})
		if err != nil {
			t.Fatal(err)
		}
		if got := collect(t, s); !slices.Equal(got, c.want) {
			t.Errorf("%q minus %q: got %q, want %q", c.pats, c.excl, got, c.want)
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
