// Package template expands GNU parallel's replacement strings in a command
// line, and quotes words for POSIX shells.
//
// The replacement strings are those of GNU parallel, with the same results
// on every edge case GNU parallel 20221122 was checked against:
//
//	{}    the input
//	{.}   the input without its extension ("dir/b.txt" -> "dir/b"; ".bashrc" -> "")
//	{/}   the basename: everything after the last "/" ("a/" -> "")
//	{//}  the POSIX dirname ("a" -> ".", "/a" -> "/", "a/" -> ".")
//	{/.}  the basename without its extension
//	{#}   the job number, 1-based in input order
//	{%}   the job slot, 1-based
//
// A replacement string may appear anywhere inside an argument ("{}.out").
// When the command holds none, the input is appended as its last argument.
//
// Without a shell, each argument is expanded on its own and the result is
// the argv of the job: the input reaches the program byte for byte, whatever
// spaces, quotes, newlines, leading dashes or invalid UTF-8 it holds. With a
// shell, the arguments are joined with spaces into one script for `sh -c`,
// and every substituted value is single-quoted with [Quote], so the shell
// sees it as one literal word.
package template

import (
	"errors"
	"strconv"
	"strings"
)

// ErrEmpty is returned by Parse for a command with no words.
var ErrEmpty = errors.New("template: empty command")

// ShellPath is the shell that runs a --shell job's script with "-c".
const ShellPath = "/bin/sh"

type kind uint8

const (
	lit       kind = iota
	whole          // {}
	noExt          // {.}
	base           // {/}
	dir            // {//}
	baseNoExt      // {/.}
	seqNum         // {#}
	slotNum        // {%}
)

var tokens = []struct {
	s string
	k kind
}{
	// Longest first, so "{//}" is not read as "{/" + "/}".
	{"{//}", dir}, {"{/.}", baseNoExt}, {"{.}", noExt}, {"{/}", base},
	{"{#}", seqNum}, {"{%}", slotNum}, {"{}", whole},
}

type part struct {
	k   kind
	lit string
}

// Template is a parsed command line. It is immutable and safe for
// concurrent use.
type Template struct {
	words [][]part
	shell bool
	// appendInput is set when no word holds a replacement string.
	appendInput bool
}

// Parse parses argv. With shell, Expand returns a `sh -c` command line.
// Text that looks like a replacement string but is not one of the seven
// ("{x}") is kept literally, as GNU parallel does.
func Parse(argv []string, shell bool) (*Template, error) {
	if len(argv) == 0 {
		return nil, ErrEmpty
	}
	t := &Template{shell: shell, appendInput: true}
	for _, w := range argv {
		var parts []part
		rest := w
		for rest != "" {
			i := strings.IndexByte(rest, '{')
			if i < 0 {
				parts = append(parts, part{k: lit, lit: rest})
				break
			}
			matched := false
			for _, tok := range tokens {
				if strings.HasPrefix(rest[i:], tok.s) {
					if i > 0 {
						parts = append(parts, part{k: lit, lit: rest[:i]})
					}
					parts = append(parts, part{k: tok.k})
					rest = rest[i+len(tok.s):]
					matched = true
					// Any replacement string, {#} and {%} included,
					// stops the input being appended (as in GNU parallel).
					t.appendInput = false
					break
				}
			}
			if !matched {
				parts = append(parts, part{k: lit, lit: rest[:i+1]})
				rest = rest[i+1:]
			}
		}
		if len(parts) == 0 {
			parts = []part{{k: lit}}
		}
		t.words = append(t.words, parts)
	}
	return t, nil
}

// HasInput reports whether the command holds a replacement string; when it
// does not, Expand appends the input as the last argument.
func (t *Template) HasInput() bool { return !t.appendInput }

// Expand returns the argv of the job with input, job number seq and slot.
// Without --shell it is the expanded words; with --shell it is
// [ShellPath, "-c", script].
func (t *Template) Expand(input string, seq int64, slot int) []string {
	if t.shell {
		return []string{ShellPath, "-c", t.Script(input, seq, slot)}
	}
	n := len(t.words)
	if t.appendInput {
		n++
	}
	argv := make([]string, 0, n)
	var b strings.Builder
	for _, w := range t.words {
		if len(w) == 1 {
			argv = append(argv, value(w[0], input, seq, slot))
			continue
		}
		b.Reset()
		for _, p := range w {
			b.WriteString(value(p, input, seq, slot))
		}
		argv = append(argv, b.String())
	}
	if t.appendInput {
		argv = append(argv, input)
	}
	return argv
}

// Script returns the shell script of a --shell job: the words joined with
// spaces as written, with every substituted value quoted by Quote.
func (t *Template) Script(input string, seq int64, slot int) string {
	var b strings.Builder
	for i, w := range t.words {
		if i > 0 {
			b.WriteByte(' ')
		}
		for _, p := range w {
			if p.k == lit {
				b.WriteString(p.lit)
			} else {
				b.WriteString(Quote(value(p, input, seq, slot)))
			}
		}
	}
	if t.appendInput {
		b.WriteByte(' ')
		b.WriteString(Quote(input))
	}
	return b.String()
}

// Display returns the command of a job as a shell would read it: the
// script with --shell, else the argv with each word quoted when needed. It
// is what --dry-run prints and the joblog's Command column holds.
func (t *Template) Display(input string, seq int64, slot int) string {
	if t.shell {
		return t.Script(input, seq, slot)
	}
	return Join(t.Expand(input, seq, slot))
}

func value(p part, input string, seq int64, slot int) string {
	switch p.k {
	case lit:
		return p.lit
	case whole:
		return input
	case noExt:
		return StripExt(input)
	case base:
		return Base(input)
	case dir:
		return Dir(input)
	case baseNoExt:
		return StripExt(Base(input))
	case seqNum:
		return strconv.FormatInt(seq, 10)
	case slotNum:
		return strconv.Itoa(slot)
	}
	return ""
}

// StripExt removes the extension of the last path element: the last "."
// and what follows it, if that contains no "/" and no "." ({.}).
func StripExt(s string) string {
	i := strings.LastIndexByte(s, '.')
	if i < 0 || strings.IndexByte(s[i+1:], '/') >= 0 {
		return s
	}
	return s[:i]
}

// Base returns everything after the last "/" ({/}); "" for "a/".
func Base(s string) string {
	return s[strings.LastIndexByte(s, '/')+1:]
}

// Dir returns the POSIX dirname of s ({//}): "." without a "/", "/" for a
// file in the root, trailing slashes ignored.
func Dir(s string) string {
	s = strings.TrimRight(s, "/")
	if s == "" {
		return "/"
	}
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return "."
	}
	s = strings.TrimRight(s[:i], "/")
	if s == "" {
		return "/"
	}
	return s
}

// Quote returns s as one word for a POSIX shell: unchanged when it holds
// only characters no shell treats specially, else in single quotes, with
// each single quote written as '"'"'. The empty string becomes a pair of
// single quotes.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if isSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// Join quotes each word with Quote and joins them with spaces.
func Join(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Quote(w))
	}
	return b.String()
}

func isSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_./,:+@%=", c) >= 0:
		default:
			return false
		}
	}
	return true
}
