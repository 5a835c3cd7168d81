package input

import (
	"slices"
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
