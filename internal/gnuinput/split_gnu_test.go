package gnuinput

import (
	"slices"
	"testing"

	"github.com/ration-run/ration/runner/input"
)

// TestJoinContinuedPerlBlanks: -L continues a record that ends in any of
// Perl's \s, as GNU parallel's /\s$/ does (`printf 'a\n\0b\0c\0' |
// parallel -0 -L1` runs "a\nb", then "c"); ration continued only after a
// space or a tab.
func TestJoinContinuedPerlBlanks(t *testing.T) {
	in := []string{"f \r", "g", "h\f", "i", "j\v", "k", "a\n", "b", "c", ""}
	want := []string{"f \rg", "h\fi", "j\vk", "a\nb", "c", ""}
	if got := collect(t, JoinContinued(input.Args(in))); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestLinesAsGNU: -L and -r together, in GNU parallel's order, and -r's
// blanks are Perl's \s. Each want is what GNU parallel 20221122 runs
// (`printf IN | parallel -k [-r] [-L1] echo`). ration checked a record
// for -L by its last piece, not by what it had joined ("a \n\nb" with -L1
// was "a " and "b"), left out a blank record that continued another, and
// -r dropped values of Unicode spaces only (U+00A0), which GNU runs.
func TestLinesAsGNU(t *testing.T) {
	for _, c := range []struct {
		in              []string
		join, skipBlank bool
		want            []string
	}{
		{[]string{"a ", "", "b"}, true, false, []string{"a b"}},
		{[]string{"a ", "", "b"}, true, true, []string{"a b"}},
		{[]string{"a ", " ", "b"}, true, true, []string{"a  b"}},
		{[]string{"x", " ", "h"}, true, true, []string{"x", "h"}},
		{[]string{"x", " ", "h"}, true, false, []string{"x", " h"}},
		{[]string{"\u00a0", "", " \t", "\u2003", "x"}, false, true, []string{"\u00a0", "\u2003", "x"}},
		{[]string{"a ", "b", "c "}, true, false, []string{"a b", "c "}},
		{[]string{"a", "b"}, false, false, []string{"a", "b"}},
	} {
		if got := collect(t, Lines(input.Args(c.in), c.join, c.skipBlank)); !slices.Equal(got, c.want) {
			t.Errorf("%q join=%v skipBlank=%v: got %q, want %q", c.in, c.join, c.skipBlank, got, c.want)
		}
	}
}
