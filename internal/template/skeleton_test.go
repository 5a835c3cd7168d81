package template

import (
	"slices"
	"testing"

	"github.com/ration-run/ration/runner/joblog"
)

// TestSkeleton: every Display of a template fits its Skeleton, whatever
// the fields (none, empty, quoted, several), the job number and the slot;
// and a Display of another command whose text differs outside what the
// replacement strings can stand for does not (gzip {} and gzip -9 {} are
// told apart by no skeleton: {} may be "-9 a").
func TestSkeleton(t *testing.T) {
	fieldSets := [][]string{nil, {""}, {"a"}, {"a b.txt"}, {"it's", "x\ty"}, {"d/f.tar.gz", "-n", "c"}}
	for _, c := range []struct {
		argv  []string
		opts  Options
		other []string
		want  []string
	}{
		{[]string{"sleep 0.1 && gzip {}"}, Options{Shell: true}, []string{"sleep 0.2 && gzip {}"}, []string{"sleep 0.1 && gzip", ""}},
		{[]string{"echo", "first"}, Options{}, []string{"echo", "second"}, []string{"echo first", ""}},
		{[]string{"echo", "first"}, Options{Shell: true}, []string{"echo", "second"}, []string{"echo first", ""}},
		{[]string{"cp", "{}", "{.}.bak"}, Options{}, []string{"mv", "{}", "{.}.bak"}, []string{"cp", "", ""}},
		{[]string{"cp {} {.}.bak"}, Options{Shell: true}, []string{"cp {} {.}.old"}, []string{"cp", "", ".bak"}},
		{[]string{"echo", "{#}", "{%}", "a b", "{2}"}, Options{}, []string{"echo", "{#}", "{%}", "a c", "{2}"}, []string{"echo", "", "'a b'", ""}},
		{[]string{"echo x{}y z"}, Options{Shell: true, Context: true}, []string{"echo x{}y q"}, nil},
		{[]string{"echo", "x{}y", "z"}, Options{Context: true}, []string{"echo", "x{}y", "q"}, nil},
		{[]string{"{}", "done"}, Options{}, []string{"{}", "finished"}, nil},
	} {
		tp, err := ParseOptions(c.argv, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		other, err := ParseOptions(c.other, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		skel := tp.Skeleton()
		if c.want != nil && !slices.Equal(skel, c.want) {
			t.Errorf("%q: Skeleton %q, want %q", c.argv, skel, c.want)
		}
		for _, fields := range fieldSets {
			for _, seq := range []int64{1, 12345} {
				if d := tp.DisplayFields(fields, seq, 3); !joblog.Fits(d, skel) {
					t.Errorf("%q %v: %q does not fit %q", c.argv, c.opts, d, skel)
				}
				if d := other.DisplayFields(fields, seq, 3); joblog.Fits(d, skel) {
					t.Errorf("%q %v: %q of %q fits %q", c.argv, c.opts, d, c.other, skel)
				}
			}
		}
	}
}
