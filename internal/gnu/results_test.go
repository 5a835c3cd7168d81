package gnu

import (
	"path/filepath"
	"testing"

	"github.com/ration-run/ration/internal/gnuinput"
)

// TestResultsDirHeaderOrder: with --header, --results names the fields in
// the order of their names, numerically first, then by bytes, as GNU
// parallel 20221122 sorts them (`parallel --header : --results R echo
// ::: zeta z1 ::: alpha a1` writes R/alpha/a1/zeta/z1/). ration kept the
// column order, so its tree differed from GNU's.
func TestResultsDirHeaderOrder(t *testing.T) {
	for _, c := range []struct {
		args  []gnuinput.Arg
		names []string
		want  []string
	}{
		{[]gnuinput.Arg{{"z1", "a1"}}, []string{"zeta", "alpha"}, []string{"alpha", "a1", "zeta", "z1"}},
		{[]gnuinput.Arg{{"v1", "v2", "v3", "v4", "v5"}}, []string{"10", "9", "b", "a", "-1"}, []string{"-1", "v5", "a", "v4", "b", "v3", "9", "v2", "10", "v1"}},
		{[]gnuinput.Arg{{"v1", "v2", "v3"}}, []string{"2x", "inf", ".5"}, []string{".5", "v3", "2x", "v1", "inf", "v2"}},
		{[]gnuinput.Arg{{"1", "2"}, {"3", "4"}}, []string{"b", "a"}, []string{"a", "2", "b", "1", "a", "4", "b", "3"}},
		{[]gnuinput.Arg{{"x", "y"}}, nil, []string{"1", "x", "2", "y"}},
	} {
		if got, want := ResultsDir("R", c.args, c.names), filepath.Join(append([]string{"R"}, c.want...)...); got != want {
			t.Errorf("%q named %q: %s, want %s", c.args, c.names, got, want)
		}
	}
}
