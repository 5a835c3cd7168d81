package runcmd

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"
)

// namesOnly reports whether `ration run -h` names the flags of the group
// titled title without saying what each does: GNU parallel's options a
// user coming from it already knows, and --pipe's, which come together.
func namesOnly(title string) bool {
	switch title {
	case "GNU parallel compatibility", "Standard input cut into blocks (--pipe)":
		return true
	}
	return false
}

// printShortHelp writes `ration run -h`: the usage, what ration run does,
// and every flag of helpGroups on one line with the first clause of what
// it does (namesOnly groups as a list of names), in helpWidth columns.
// --help has the whole text; -h is the summary that reads in a minute, as
// ripgrep splits its -h and --help.
func printShortHelp(w io.Writer, fs *pflag.FlagSet) error {
	usage, _, _ := strings.Cut(runUsage, "\n\nWith --worker")
	fmt.Fprintf(w, "%s\n", usage)
	aliases := map[string][]*pflag.Flag{}
	fs.VisitAll(func(f *pflag.Flag) {
		if to := aliasOf(f); to != "" && !f.Hidden {
			aliases[to] = append(aliases[to], f)
		}
	})
	for _, g := range helpGroups() {
		if g.title == "" {
			continue // --help itself: the last line says it
		}
		fmt.Fprintf(w, "\n%s:\n", g.title)
		if namesOnly(g.title) {
			var names []string
			for _, name := range g.flags {
				names = append(names, "--"+name)
			}
			for _, l := range wrap(strings.Join(names, " "), helpWidth-3) {
				fmt.Fprintf(w, "  %s\n", l)
			}
			continue
		}
		for _, name := range g.flags {
			f := fs.Lookup(name)
			if f == nil {
				return fmt.Errorf("help: no flag --%s", name)
			}
			names, usage := flagNames(f, aliases[name])
			line := "  " + names
			if len(line) > helpNameWidth-2 {
				fmt.Fprintln(w, line)
				line = ""
			}
			fmt.Fprintf(w, "%-*s%s\n", helpNameWidth, line, firstClause(usage, helpWidth-helpNameWidth-1))
		}
	}
	_, err := fmt.Fprintln(w, "\nration run --help says what each flag does in full, with its default, the\nOOM rule and the exit statuses.")
	return err
}

// firstClause returns the gist of a flag's usage s in at most width
// characters: without its parentheticals and a leading "--flag:" or
// "with ...:" qualifier (the group says it), up to its first clause break
// ("; ", ". ", ", e.g.", and ": " after three words or more), cut at a
// space with an ellipsis when still longer.
func firstClause(s string, width int) string {
	s = withoutParens(s)
	if pre, rest, ok := strings.Cut(s, ": "); ok && (strings.HasPrefix(pre, "-") || strings.HasPrefix(pre, "with ")) {
		s = rest
	}
	for _, sep := range []string{", e.g.", "; ", ". ", ": "} {
		i := strings.Index(s, sep)
		if i > 0 && (sep != ": " || len(strings.Fields(s[:i])) >= 3) {
			s = s[:i]
		}
	}
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	cut := strings.LastIndex(s[:width-1], " ")
	if cut <= 0 {
		cut = width - 1
	}
	return strings.TrimRight(s[:cut], ",;:") + "…"
}

// withoutParens returns s without its parenthesised asides and the space
// before each.
func withoutParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	s = strings.Join(strings.Fields(b.String()), " ")
	return strings.NewReplacer(" ,", ",", " ;", ";", " .", ".").Replace(s)
}
