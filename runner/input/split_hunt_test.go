package input

import (
	"slices"
	"testing"
)

// TestJoinContinuedPerlBlanks: -L continues a record that ends in any of
// Perl's \s, as GNU parallel's /\s$/ does (`printf 'a\n\0b\0c\0' |
// parallel -0 -L1` runs "a\nb", then "c"); ration continued only after a
// space or a tab.
func TestJoinContinuedPerlBlanks(t *testing.T) {
	in := []string{"f \r", "g", "h\f", "i", "j\v", "k", "a\n", "b", "c", ""}
	want := []string{"f \rg", "h\fi", "j\vk", "a\nb", "c", ""}
	if got := collect(t, JoinContinued(Args(in))); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
