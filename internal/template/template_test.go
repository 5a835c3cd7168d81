package template

import (
	"os/exec"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The expected values are GNU parallel 20221122's output for
// parallel -k echo '{.}|{/}|{//}|{/.}'.
func TestPathStrings(t *testing.T) {
	cases := []struct{ in, noExt, base, dir, baseNoExt string }{
		{"a", "a", "a", ".", "a"},
		{"dir/b.txt", "dir/b", "b.txt", "dir", "b"},
		{".bashrc", "", ".bashrc", ".", ""},
		{"dir.x/file", "dir.x/file", "file", "dir.x", "file"},
		{"/abs/x.tar.gz", "/abs/x.tar", "x.tar.gz", "/abs", "x.tar"},
		{"a.b/", "a.b/", "", ".", ""},
		{"a/", "a/", "", ".", ""},
		{"/a", "/a", "a", "/", "a"},
		{"", "", "", ".", ""},
		{"/", "/", "", "/", ""},
		{"//", "//", "", "/", ""},
		{"a//b", "a//b", "b", "a", "b"},
	}
	for _, c := range cases {
		tp, _ := Parse([]string{"{.}|{/}|{//}|{/.}"}, false)
		got := tp.Expand(c.in, 1, 1)[0]
		want := c.noExt + "|" + c.base + "|" + c.dir + "|" + c.baseNoExt
		if got != want {
			t.Errorf("%q: got %q, want %q", c.in, got, want)
		}
	}
}

func TestExpand(t *testing.T) {
	cases := []struct {
		argv  []string
		shell bool
		in    string
		want  []string
	}{
		{[]string{"echo"}, false, "a b", []string{"echo", "a b"}},
		{[]string{"echo", "{#}"}, false, "a", []string{"echo", "7"}},
		{[]string{"echo", "{%}"}, false, "a", []string{"echo", "3"}},
		{[]string{"cp", "{}", "{.}.bak"}, false, "-x.c", []string{"cp", "-x.c", "-x.bak"}},
		{[]string{"echo", "{x}", "{"}, false, "a", []string{"echo", "{x}", "{", "a"}},
		{[]string{"echo", ""}, false, "a", []string{"echo", "", "a"}},
		{[]string{"echo", "{}"}, true, "it's", []string{ShellPath, "-c", `echo 'it'"'"'s'`}},
		{[]string{"wc", "-l", "|", "cat"}, true, "a b", []string{ShellPath, "-c", "wc -l | cat 'a b'"}},
	}
	for _, c := range cases {
		tp, err := Parse(c.argv, c.shell)
		if err != nil {
			t.Fatal(err)
		}
		if got := tp.Expand(c.in, 7, 3); !slices.Equal(got, c.want) {
			t.Errorf("%q %v on %q: got %q, want %q", c.argv, c.shell, c.in, got, c.want)
		}
	}
	if _, err := Parse(nil, false); err != ErrEmpty {
		t.Errorf("Parse(nil) = %v, want ErrEmpty", err)
	}
}

// TestQuoteRoundTrip runs sh on quoted hostile strings: the shell must read
// each back byte for byte.
func TestQuoteRoundTrip(t *testing.T) {
	hostile := []string{"", "a b", "it's", `"q"`, "new\nline", "-n", "$(touch /tmp/x)", "`x`", "\xff\xfe", "a\\b", "*", "~", "'", "''", "tab\there", "!x"}
	for _, s := range hostile {
		out, err := exec.Command(ShellPath, "-c", "printf %s "+Quote(s)).Output()
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if string(out) != s {
			t.Errorf("Quote(%q) = %s read back as %q", s, Quote(s), out)
		}
	}
	if got := Join([]string{"echo", "a b", "c"}); got != "echo 'a b' c" {
		t.Errorf("Join = %q", got)
	}
}

// TestQuoteAsGNU: GNU parallel's Q, as 20221122 quotes (each want
// checked with `printf '%s\n' IN | parallel --shellquote`).
func TestQuoteAsGNU(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "''",
		"abc-_.+/09":                "abc-_.+/09",
		"a b":                       "'a b'",
		`a b "c`:                    `'a b "c'`,
		"it's":                      `'it'"'"'s'`,
		"'a":                        `"'"'a'`,
		"a'":                        `'a'"'"`,
		"'":                         `"'"`,
		"x=1":                       "'x=1'",
		"a,b:c@d%e":                 "'a,b:c@d%e'",
		"''":                        `"'"''"'"`,
		`perl -e 'print "@ARGV\n"'`: `'perl -e '"'"'print "@ARGV\n"'"'"`,
	} {
		if got := Quote(in); got != want || quotedLen(in) != len(want) {
			t.Errorf("Quote(%q) = %s (quotedLen %d), want %s", in, got, quotedLen(in), want)
		}
	}
}
