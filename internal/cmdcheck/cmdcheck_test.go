package cmdcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ration-run/ration/internal/template"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		c    Command
		want string // "" no error, else substrings of it, "|" between
	}{
		{"in PATH", Command{Argv: []string{"sh", "-c", "true"}}, ""},
		{"not in PATH", Command{Argv: []string{"no-such-program-cmdcheck"}},
			`cannot run "no-such-program-cmdcheck": executable file not found in $PATH`},
		{"no such file", Command{Argv: []string{filepath.Join(dir, "none"), "x"}}, `cannot run "` + filepath.Join(dir, "none") + `": no such file or directory`},
		{"not executable", Command{Argv: []string{plain}}, "permission denied"},
		{"a directory", Command{Argv: []string{dir}}, `cannot run "` + dir + `": `},
		{"relative, in the jobs' workdir", Command{Argv: []string{"./build.sh"}, Workdir: true}, ""},
		{"relative, here", Command{Argv: []string{"./no-such-build.sh"}}, "no such file or directory"},
		{"with --shell", Command{Argv: []string{"no-such-program-cmdcheck"}, Shell: true}, ""},
		{"no command", Command{}, ""},
		{"from the input", Command{Argv: []string{"{}", "-v"}}, ""},
		{"from a column", Command{Argv: []string{"{2}"}}, ""},
		{"from a header name", Command{Argv: []string{"{prog}"}, Template: template.Options{Names: []string{"prog"}}}, ""},
		{"from a header name not read yet", Command{Argv: []string{"{prog}"}, Header: true}, ""},
		{"braces, no header", Command{Argv: []string{"{prog}"}}, `cannot run "{prog}"`},
		{"from a custom string", Command{Argv: []string{"XX"}, Template: template.Options{Strings: template.Strings{Input: "XX"}}}, ""},
		{"a quoted pipeline", Command{Argv: []string{"echo {} | tr a-z A-Z"}},
			`"echo {} | tr a-z A-Z" is a shell command line, not a program, and runs without a shell: did you mean --shell?`},
		{"a quoted pipeline, literal", Command{Argv: []string{"ls | wc -l"}}, "did you mean --shell?"},
		{"not found, an operator", Command{Argv: []string{"no-such-program-cmdcheck", "a", ">", "b"}},
			`cannot run "no-such-program-cmdcheck": executable file not found in $PATH; the command holds shell syntax (>) but runs without a shell: did you mean --shell?`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.c)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Check(%q) = %v, want nil", c.c.Argv, err)
			case c.want != "" && err == nil:
				t.Errorf("Check(%q) = nil, want %q", c.c.Argv, c.want)
			case err != nil && (!strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
				t.Errorf("Check(%q) = %q, want one line holding %q", c.c.Argv, err, c.want)
			}
		})
	}
}

func TestHint(t *testing.T) {
	for _, c := range []struct {
		argv  []string
		shell bool
		word  string // "": no hint
	}{
		{[]string{"echo", "{}", ">", "out_{}.txt"}, false, ">"},
		{[]string{"echo", "{}", ">out_{}.txt"}, false, ">out_{}.txt"},
		{[]string{"cat", "{}", "|", "wc", "-l"}, false, "|"},
		{[]string{"make", "{}", "&&", "echo", "ok"}, false, "&&"},
		{[]string{"cd", "{}", ";", "make"}, false, ";"},
		{[]string{"cmd", "{}", "2>&1"}, false, "2>&1"},
		{[]string{"sort", "<", "{}"}, false, "<"},
		{[]string{"echo", "{}", ">", "out"}, true, ""},
		{[]string{"awk", "{print $1}", "{}"}, false, ""},
		{[]string{"awk", "{ print $1; print $2 }", "{}"}, false, ""},
		{[]string{"grep", "-E", "a|b", "{}"}, false, ""},
		{[]string{"grep", "<title>", "{}"}, false, ""},
		{[]string{"sed", "s/a$/b/", "{}"}, false, ""},
		{[]string{"find", "{}", "-name", "*.o", "-exec", "rm", "{}", ";"}, false, ""},
		{[]string{"find", "{}", "-exec", "rm", "{}", "+", ";", "echo"}, false, ";"},
		{[]string{"sh", "-c", "echo {} | wc -c"}, false, ""},
		{[]string{">", "x"}, false, ""}, // the program word is Check's
	} {
		h := Hint(Command{Argv: c.argv, Shell: c.shell})
		switch {
		case c.word == "" && h != "":
			t.Errorf("Hint(%q) = %q, want none", c.argv, h)
		case c.word != "" && h != "the command holds shell syntax ("+c.word+") but runs without a shell: did you mean --shell?":
			t.Errorf("Hint(%q) = %q, want one naming %q", c.argv, h, c.word)
		}
	}
}
