package template

import (
	"slices"
	"strings"
	"testing"
)

// TestShellContextGroups: with --shell and -X, what is repeated per field
// is the group between blanks that holds {}, as GNU parallel repeats it,
// not the whole argv word. Each want is GNU parallel 20221122's
// `parallel -X -j1 --dry-run CMD ::: a b.x 'c d'`. ration repeated the
// whole word: 'printf "%s\n" {}' was `printf "%s\n" a printf "%s\n" b.x ...`.
func TestShellContextGroups(t *testing.T) {
	fields := []string{"a", "b.x", "c d"}
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{`printf '%s\n' {}`}, `printf '%s\n' a b.x 'c d'`},
		{[]string{"echo x{}y z"}, "echo xay xb.xy x'c d'y z"},
		{[]string{"echo", "x{}y z"}, "echo xay xb.xy x'c d'y z"},
		{[]string{"echo  {}  end"}, "echo  a b.x 'c d'  end"},
		{[]string{"echo\t{}\tq"}, "echo\ta \tb.x \t'c d'\tq"},
		{[]string{"echo\t\t{}\t q"}, "echo\t\ta \tb.x \t'c d'\t q"},
		{[]string{"echo {}\necho done"}, "echo a\necho b.x\necho 'c d'\necho done"},
		{[]string{"echo {} {}"}, "echo a b.x 'c d' a b.x 'c d'"},
		{[]string{"echo {1}-{} {#}{%}"}, "echo a-a a-b.x a-'c d' 11"},
		{[]string{" echo {} "}, " echo a b.x 'c d' "},
		{[]string{"echo pre{.}post"}, "echo preapost prebpost pre'c d'post"},
	} {
		tp, err := ParseOptions(c.argv, Options{Shell: true, Context: true})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{ShellPath, "-c", c.want}
		if got := tp.ExpandFields(fields, 1, 1); !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", c.argv, got[2], c.want)
		}
		if slices.ContainsFunc(c.argv, func(w string) bool { return strings.Contains(w, "{#}") }) {
			continue // the Measurer counts numbers as 10 digits
		}
		m := tp.Measurer()
		for i := range fields {
			if got, want := m.Add(fields[i:i+1]), len(tp.ScriptFields(fields[:i+1], 1, 1)); got != want {
				t.Errorf("%q: Measurer says %d for %d fields, the line is %d long", c.argv, got, i+1, want)
			}
		}
	}
}
