package template

import (
	"fmt"
	"strings"
)

// unsupportedSpan returns the error for a perl expression or a rush
// replacement string in argv. A perl expression may span words: GNU
// parallel joins the words with spaces before it looks for {= ... =}, so
// the unquoted `echo {= s/a/b/ =}` (three words) is one expression.
func unsupportedSpan(argv []string) error {
	for _, w := range argv {
		if err := unsupported(w); err != nil {
			return err
		}
	}
	for i, w := range argv {
		if !strings.Contains(w, "{=") {
			continue
		}
		for j := i + 1; j < len(argv); j++ {
			if strings.Contains(argv[j], "=}") {
				return perlErr(strings.Join(argv[i:j+1], " "))
			}
		}
	}
	return nil
}

// perlErr is the error for the perl expression in text.
func perlErr(text string) error {
	return fmt.Errorf("template: %q: perl expressions ({= ... =}) are %w: ration runs no perl; "+
		"compute the value in a shell instead, e.g. --shell 'n=$(( {} + 1 )); mv log.{} log.$n'", text, ErrUnsupported)
}

// unsupported returns the error for a perl expression or a rush
// replacement string in word w.
func unsupported(w string) error {
	if i := strings.Index(w, "{="); i >= 0 && strings.Contains(w[i+2:], "=}") {
		return perlErr(w)
	}
	for _, r := range []struct{ prefix, what, instead string }{
		{"{^", "rush's {^suffix} (remove a suffix)", "--shell 'f={}; cmd \"${f%suffix}\"'"},
		{"{@", "rush's {@regexp} (capture)", "--colsep REGEX and {1}, {2}, or --shell with sed"},
		{"{:}", "rush's {:} (remove every extension)", "--shell 'f={/}; cmd \"${f%%.*}\"'"},
		{"{%.}", "rush's {%.} (basename without extension)", "{/.}"},
		{"{%:}", "rush's {%:} (basename without any extension)", "--shell 'f={/}; cmd \"${f%%.*}\"'"},
		{"{%^", "rush's {%^suffix} (basename without a suffix)", "--shell 'f={/}; cmd \"${f%suffix}\"'"},
	} {
		if i := strings.Index(w, r.prefix); i >= 0 && strings.IndexByte(w[i:], '}') >= 0 {
			return fmt.Errorf("template: %q: %s is %w; use %s", w, r.what, ErrUnsupported, r.instead)
		}
	}
	return nil
}
