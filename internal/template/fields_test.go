package template

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestUnsupported(t *testing.T) {
	for _, w := range []string{"log.{= $_++ =}", "{=uc=}", "{^.gz}", "{@(\\d+)}", "{:}", "x{%.}", "{%:}", "{%^.gz}"} {
		_, err := Parse([]string{"mv", w}, false)
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%q: %v, want ErrUnsupported", w, err)
			continue
		}
		if strings.Contains(w, "{=") && !strings.Contains(err.Error(), "--shell") {
			t.Errorf("%q: the error does not show the --shell way: %v", w, err)
		}
	}
	// A perl expression the shell split into words (echo {= s/a/b/ =},
	// unquoted): GNU parallel joins the words before it looks for one.
	for _, argv := range [][]string{{"echo", "{=", "s/a/b/", "=}"}, {"echo", "x{=", "$_=uc($_)", "=}y"}, {"echo", "{=1", "s/a/b/", "=}"}} {
		if _, err := Parse(argv, false); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), strings.Join(argv[1:], " ")) {
			t.Errorf("%q: %v, want ErrUnsupported naming the words", argv, err)
		}
	}
	// Not rush's: kept literally as GNU parallel does.
	for _, w := range []string{"{=", "{^", "{:x", "a=}"} {
		if _, err := Parse([]string{"echo", w}, false); err != nil {
			t.Errorf("%q: %v", w, err)
		}
	}
}

func TestShellSyntax(t *testing.T) {
	cases := []struct {
		argv []string
		want string
	}{
		{[]string{"grep", "-c", "x", "|", "wc"}, "|"},
		{[]string{"echo", "{}", ">out"}, ">out"},
		{[]string{"echo", "$HOME"}, "$HOME"},
		{[]string{"a", "&&", "b"}, "&&"},
		{[]string{"cmd;"}, "cmd;"},
		{[]string{"echo", "$(date)"}, "$(date)"},
		{[]string{"grep", "-E", "a|b", "{}"}, ""},
		{[]string{"echo", "costs $5"}, "costs $5"},
		{[]string{"echo", "5$", "{}"}, ""},
	}
	for _, c := range cases {
		got, ok := ShellSyntax(c.argv)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("ShellSyntax(%q) = %q, %v; want %q", c.argv, got, ok, c.want)
		}
	}
}

// TestMeasurerExact checks that the Measurer's length is that of the
// displayed line whenever no {#} or {%} is in it.
func TestMeasurerExact(t *testing.T) {
	fields := []string{"a", "b c", "it's", "", "d/e.f"}
	for _, c := range []struct {
		argv []string
		ctx  bool
	}{
		{[]string{"echo"}, false},
		{[]string{"echo", "{}"}, false},
		{[]string{"echo", "pre-{}-post", "x"}, true},
		{[]string{"cp", "{.}", "{/}", "--", "dst"}, true},
		{[]string{"echo", "{1}", "{2}", "{}"}, false},
	} {
		tp, err := ParseOptions(c.argv, Options{Context: c.ctx})
		if err != nil {
			t.Fatal(err)
		}
		m := tp.Measurer()
		for i := range fields {
			got := m.Add(fields[i : i+1])
			want := len(tp.ScriptFields(fields[:i+1], 1, 1))
			if got != want {
				t.Errorf("%q ctx=%v after %d fields: %d, want %d (%s)", c.argv, c.ctx, i+1, got, want, tp.ScriptFields(fields[:i+1], 1, 1))
			}
		}
		m.Reset()
		if got := m.Add(fields[:1]); got != len(tp.ScriptFields(fields[:1], 1, 1)) {
			t.Errorf("%q after Reset: %d", c.argv, got)
		}
	}
}

func TestExpandFields(t *testing.T) {
	cases := []struct {
		argv   []string
		opts   Options
		fields []string
		want   []string
	}{
		{[]string{"echo"}, Options{}, []string{"a", "b"}, []string{"echo", "a", "b"}},
		{[]string{"echo", "{}"}, Options{}, nil, []string{"echo"}},
		{[]string{"echo", "x{}y"}, Options{}, []string{"a", "b"}, []string{"echo", "xa", "by"}},
		{[]string{"echo", "x{}y"}, Options{Context: true}, []string{"a", "b"}, []string{"echo", "xay", "xby"}},
		{[]string{"echo", "{2}", "{-1}", "{5}"}, Options{}, []string{"a", "b", "c"}, []string{"echo", "b", "c"}},
		{[]string{"echo", "{n/.}"}, Options{Names: []string{"", "n"}}, []string{"a", "x/y.z"}, []string{"echo", "y"}},
		{[]string{"echo", "{}"}, Options{Shell: true}, []string{"a b", "c"}, []string{ShellPath, "-c", "echo 'a b' c"}},
		{[]string{"echo", "p{}"}, Options{Shell: true, Context: true}, []string{"a b", "c"}, []string{ShellPath, "-c", "echo p'a b' pc"}},
		{[]string{"echo"}, Options{Shell: true}, []string{"a b", "c"}, []string{ShellPath, "-c", "echo 'a b' c"}},
	}
	for _, c := range cases {
		tp, err := ParseOptions(c.argv, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := tp.ExpandFields(c.fields, 1, 1); !slices.Equal(got, c.want) {
			t.Errorf("%q %+v on %q: got %q, want %q", c.argv, c.opts, c.fields, got, c.want)
		}
	}
}
