package input

import (
	"strings"
	"testing"
)

// TestIgnoreRules is a table of gitignore(5) semantics: each rule file is
// matched against paths relative to its directory.
func TestIgnoreRules(t *testing.T) {
	for _, c := range []struct {
		rules string
		path  string
		dir   bool
		want  bool
	}{
		{"*.o", "a.o", false, true},
		{"*.o", "deep/er/a.o", false, true},
		{"*.o", "a.c", false, false},
		{"/a.o", "a.o", false, true},
		{"/a.o", "d/a.o", false, false},
		{"doc/frotz/", "doc/frotz", true, true},
		{"doc/frotz/", "doc/frotz", false, false},
		{"doc/frotz/", "a/doc/frotz", true, false}, // a "/" in the middle anchors
		{"frotz/", "a/frotz", true, true},
		{"frotz", "a/frotz", false, true},
		{"**/foo", "foo", false, true},
		{"**/foo", "x/y/foo", false, true},
		{"**/foo/bar", "x/foo/bar", false, true},
		{"abc/**", "abc/x", false, true},
		{"abc/**", "abc/x/y", false, true},
		{"abc/**", "abc", true, false},
		{"a/**/b", "a/b", false, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"a/**/b", "x/a/b", false, false},
		{"foo/*", "foo/bar", false, true},
		{"foo/*", "foo/bar/baz", false, false},
		{"?.txt", "a.txt", false, true},
		{"?.txt", "ab.txt", false, false},
		{"[!a]x", "bx", false, true},
		{"[!a]x", "ax", false, false},
		{"[a-c].md", "b.md", false, true},
		{"*.log\n!keep.log", "keep.log", false, false},
		{"*.log\n!keep.log", "x.log", false, true},
		{"!keep.log\n*.log", "keep.log", false, true}, // the last match wins
		{`\#file`, "#file", false, true},
		{"# comment", "# comment", false, false},
		{`\!imp`, "!imp", false, true},
		{"b   ", "b", false, true},
		{`a\ `, "a ", false, true},
		{`a\ `, "a", false, false},
		{"\n\n*.tmp\r\n", "x.tmp", false, true}, // blank lines, CRLF
		{"*", ".hidden", false, true},           // ignore rules see hidden names
		{"/", "x", false, false},
	} {
		sets := []ignoreSet{{rules: parseIgnore(c.rules)}}
		if got := ignored(sets, strings.Split(c.path, "/"), c.dir); got != c.want {
			t.Errorf("rules %q, path %q (dir %v): ignored = %v, want %v", c.rules, c.path, c.dir, got, c.want)
		}
	}
}

// TestIgnorePrecedence: a deeper ignore file overrides a shallower one, and
// rules of a directory above the walk apply through its prefix.
func TestIgnorePrecedence(t *testing.T) {
	sets := []ignoreSet{
		{prefix: []string{"repo", "sub"}, start: 0, rules: parseIgnore("*.txt\n/repo/sub/only.go\n")},
		{start: 1, rules: parseIgnore("!keep.txt\n")}, // the file in directory "d"
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{"d/keep.txt", false},
		{"d/other.txt", true},
		{"keep.txt", true},
		{"only.go", true},
		{"d/only.go", false},
	} {
		if got := ignored(sets, strings.Split(c.path, "/"), false); got != c.want {
			t.Errorf("%s: ignored = %v, want %v", c.path, got, c.want)
		}
	}
}
