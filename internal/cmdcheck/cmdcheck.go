// Package cmdcheck checks the command of a run before any job starts, so
// that a mistake made once on the command line is said once, in one line,
// instead of once per job: a program that cannot be found, and shell
// syntax in a command that runs without a shell.
//
// It belongs to the command line: of this module it imports
// internal/template only, and no library package may import it.
package cmdcheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ration-run/ration/internal/template"
)

// Command is the command of a run, as the runner will run it.
type Command struct {
	// Argv is the command's words as given, replacement strings unexpanded.
	Argv []string
	// Shell is --shell: a shell runs the command and finds its program.
	Shell bool
	// Workdir reports that the jobs run in a directory of their own
	// (--workdir), where a relative path with a slash is looked up.
	Workdir bool
	// Template holds the replacement strings of the run (custom ones,
	// --header's names), to tell whether the program word holds one.
	Template template.Options
	// Header is --header without Template.Names: the names of the
	// columns are read with the input, after the check, so a program
	// word holding a brace may hold one ({NAME}) and is left to its jobs.
	Header bool
}

// Check returns an error when every job of c would fail to start: its
// program word is a shell command line ("echo {} | wc -l" as one word),
// or a program that cannot be found (not in $PATH, no such file, not
// executable), looked up as the runner does. The error's text is one
// line, without a prefix. It returns nil for a command that runs through
// a shell (the shell reports what it cannot find, as each job's exit
// status 127), and for a program word holding a replacement string:
// each job then names its own program, which can only be looked up when
// it starts; a job whose program cannot be found fails, as any job that
// fails, and the run goes on with the others.
func Check(c Command) error {
	if c.Shell || len(c.Argv) == 0 {
		return nil
	}
	prog := c.Argv[0]
	if isCommandLine(prog) {
		return fmt.Errorf("%q is a shell command line, not a program, and runs without a shell: did you mean --shell?", prog)
	}
	if t, err := template.ParseOptions([]string{prog}, c.Template); err != nil || t.HasInput() {
		return nil // the runner reports the template's error; a replacement string names a program per job
	}
	if c.Header && len(c.Template.Names) == 0 && strings.Contains(prog, "{") {
		return nil
	}
	if c.Workdir && !filepath.IsAbs(prog) && strings.ContainsRune(prog, filepath.Separator) {
		return nil // looked up in each job's directory
	}
	_, err := exec.LookPath(prog)
	if err == nil {
		return nil
	}
	msg := err.Error()
	var ee *exec.Error
	if errors.As(err, &ee) {
		msg = ee.Err.Error()
		var pe *fs.PathError
		if errors.As(ee.Err, &pe) {
			msg = pe.Err.Error()
		}
	}
	line := fmt.Sprintf("cannot run %q: %s", prog, msg)
	if h := Hint(c); h != "" {
		line += "; " + h
	}
	return errors.New(line)
}

// Hint returns the hint for a command that runs without a shell and
// holds a word that is a shell operator: a pipe, a redirection or a
// command separator (|, >, >out.txt, 2>&1, ;, &&). The operator reaches the
// program literally: `ration run echo {} \> out_{}.txt` prints
// "abc > out_abc.txt". It returns "" when c runs through a shell or holds
// no operator. Words that merely hold a $ or a | ('{print $1}', 'a|b') are
// a program's own syntax (awk, grep) far more often, and find's ";" after
// -exec is find's.
func Hint(c Command) string {
	if c.Shell {
		return ""
	}
	if w, ok := operator(c.Argv); ok {
		return "the command holds shell syntax (" + w + ") but runs without a shell: did you mean --shell?"
	}
	return ""
}

// operator returns the first word of argv after the program that is a
// shell operator.
func operator(argv []string) (string, bool) {
	findExec := false
	for i, w := range argv {
		if i == 0 {
			continue
		}
		switch w {
		case "-exec", "-execdir", "-ok", "-okdir":
			findExec = true
		case ";", "+":
			if findExec {
				findExec = false
				continue
			}
		}
		switch {
		case w == "|" || w == "||" || w == "&&" || w == ";" || w == "&" || w == "|&" || w == "<<":
			return w, true
		case strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") || strings.HasPrefix(w, "&>"),
			strings.HasPrefix(w, "<") && !strings.Contains(w, ">"): // not a tag, '<title>'
			return w, true
		}
	}
	return "", false
}

// isCommandLine reports whether w is a shell command line written as one
// word: several words, and shell syntax among them.
func isCommandLine(w string) bool {
	return strings.ContainsAny(w, " \t") && strings.ContainsAny(w, "|>;$&<")
}
