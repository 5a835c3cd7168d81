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
//	{n}   the n-th field (1-based; {-1} is the last; {0} is {}), with the same
//	      modifiers: {n.} {n/} {n//} {n/.}
//	{name} the field of the column named "name" by --header (see
//	      Options.Names), with the same modifiers: {name.} ...
//
// A job has one or more fields: one per input source, one per --colsep
// column, and those of every argument when a job takes several (-n, -X,
// -m). As in GNU parallel, the fields of a job are one flat list: {n} is
// the n-th field of that list, and {} (with its modifiers) stands for every
// field, each as its own word. With Options.Context (-X), a word holding
// {} is repeated once per field instead ("pre-{}" -> "pre-a pre-b").
//
// A replacement string may appear anywhere inside an argument ("{}.out").
// When the command holds none, the fields are appended as its last
// arguments.
//
// Without a shell, each argument is expanded on its own and the result is
// the argv of the job: the input reaches the program byte for byte, whatever
// spaces, quotes, newlines, leading dashes or invalid UTF-8 it holds. With a
// shell, the arguments are joined with spaces into one script for `sh -c`,
// and every substituted value is single-quoted with [Quote], so the shell
// sees it as one literal word.
//
// GNU parallel's perl expressions ({= ... =}) and rush's replacement
// strings ({^suffix}, {@regexp}, {:}, {%.} ...) are rejected by Parse with
// an error wrapping ErrUnsupported, never left in the command literally.
//
// It imports the standard library only; runner, internal/gnu,
// internal/cmdcheck and the command line import it.
package template

import (
	"errors"
	"strconv"
	"strings"
)

// ErrEmpty is returned by Parse for a command with no words.
var ErrEmpty = errors.New("template: empty command")

// ErrUnsupported is wrapped by the error of Parse for a replacement string
// of GNU parallel or rush that ration does not implement.
var ErrUnsupported = errors.New("not supported")

// ShellPath is the shell that runs a --shell job's script with "-c".
const ShellPath = "/bin/sh"

type kind uint8

const (
	lit     kind = iota
	field        // {} and {n}, with a modifier
	seqNum       // {#}
	slotNum      // {%}
)

// mod is the modifier of a field replacement string.
type mod uint8

const (
	modNone      mod = iota // {}
	modNoExt                // {.}
	modBase                 // {/}
	modDir                  // {//}
	modBaseNoExt            // {/.}
)

// suffixes are the modifiers as written after the position ("{1/.}"),
// longest first so "{1//}" is not read as "{1/" + "/}".
var suffixes = []struct {
	s string
	m mod
}{{"//", modDir}, {"/.", modBaseNoExt}, {".", modNoExt}, {"/", modBase}, {"", modNone}}

type part struct {
	k   kind
	m   mod
	pos int // 0: every field ({}); n > 0: the n-th; n < 0: counted from the end
	lit string
}

// Strings are custom replacement strings (-I, --extensionreplace,
// --basenamereplace, --dirnamereplace, --basenameextensionreplace,
// --seqreplace, --slotreplace). An empty string keeps GNU parallel's
// default ({}, {.}, {/}, {//}, {/.}, {#}, {%}). As in GNU parallel, a
// custom string replaces the default one, which is then literal text, and
// with -I the positional strings ({1}, {name}) are literal text too.
type Strings struct {
	Input, NoExt, Base, Dir, BaseNoExt, Seq, Slot string
}

// Options configures ParseOptions.
type Options struct {
	// Shell makes Expand return a `sh -c` command line (--shell).
	Shell bool
	// ShellPath is the shell of Shell ("": ShellPath).
	ShellPath string
	// Context is -X: a word holding {} (or a modifier of it) is repeated
	// once per field. Without it (-m, -n, the default), {} stands for
	// every field, each as its own word.
	Context bool
	// Names are the column names read by --header: Names[i] names field
	// i+1, so {Names[i]} is {i+1}. Empty names are skipped; when two
	// columns have the same name, the first wins.
	Names []string
	// Strings are the custom replacement strings.
	Strings Strings
}

// Template is a parsed command line. It is immutable and safe for
// concurrent use.
type Template struct {
	words [][]part
	// context[i] is set when words[i] is repeated per field (-X).
	context []bool
	// seps[i] is what a --shell script holds before words[i]: a space
	// between the words of argv, and with -X the spaces and tabs inside an
	// argv word, which split it into words of their own (addShellGroups).
	seps  []string
	shell bool
	// shellPath is the shell of shell.
	shellPath string
	// appendInput is set when no word holds a replacement string.
	appendInput bool
}

// Parse parses argv with GNU parallel's default replacement strings. With
// shell, Expand returns a `sh -c` command line. Text that looks like a
// replacement string but is not one ("{x}", "{ }") is kept literally, as
// GNU parallel does; perl expressions and rush's strings are errors.
func Parse(argv []string, shell bool) (*Template, error) {
	return ParseOptions(argv, Options{Shell: shell})
}

type token struct {
	s string
	p part
}

// ParseOptions parses argv as opts says. It returns ErrEmpty for no words,
// and an error wrapping ErrUnsupported for a perl expression ({= ... =})
// or a rush replacement string; that error's text says what to do instead.
func ParseOptions(argv []string, opts Options) (*Template, error) {
	if len(argv) == 0 {
		return nil, ErrEmpty
	}
	toks := fixedTokens(opts.Strings)
	t := &Template{shell: opts.Shell, shellPath: opts.ShellPath, appendInput: true}
	if t.shellPath == "" {
		t.shellPath = ShellPath
	}
	if err := unsupportedSpan(argv); err != nil {
		return nil, err
	}
	for _, w := range argv {
		var parts []part
		ctx := false
		rest := w
		for rest != "" {
			i := nextCandidate(rest, toks)
			if i < 0 {
				parts = append(parts, part{k: lit, lit: rest})
				break
			}
			p, n, ok := match(rest[i:], toks, opts)
			if !ok {
				parts = append(parts, part{k: lit, lit: rest[:i+1]})
				rest = rest[i+1:]
				continue
			}
			if i > 0 {
				parts = append(parts, part{k: lit, lit: rest[:i]})
			}
			parts = append(parts, p)
			rest = rest[i+n:]
			// Any replacement string, {#} and {%} included, stops the
			// input being appended (as in GNU parallel).
			t.appendInput = false
			if p.k == field && p.pos == 0 && opts.Context {
				// Only {} and its modifiers repeat per field, not {n}.
				ctx = true
			}
		}
		if len(parts) == 0 {
			parts = []part{{k: lit}}
		}
		sep := " "
		if len(t.words) == 0 {
			sep = ""
		}
		if opts.Shell && opts.Context {
			t.addShellGroups(sep, mergeLits(parts))
			continue
		}
		t.words = append(t.words, mergeLits(parts))
		t.context = append(t.context, ctx)
		t.seps = append(t.seps, sep)
	}
	return t, nil
}

func mergeLits(parts []part) []part {
	out := parts[:0:0]
	for _, p := range parts {
		if n := len(out); n > 0 && p.k == lit && out[n-1].k == lit {
			out[n-1].lit += p.lit
			continue
		}
		out = append(out, p)
	}
	return out
}

func fixedTokens(s Strings) []token {
	or := func(custom, def string) string {
		if custom != "" {
			return custom
		}
		return def
	}
	toks := []token{
		{s: or(s.Dir, "{//}"), p: part{k: field, m: modDir}},
		{s: or(s.BaseNoExt, "{/.}"), p: part{k: field, m: modBaseNoExt}},
		{s: or(s.NoExt, "{.}"), p: part{k: field, m: modNoExt}},
		{s: or(s.Base, "{/}"), p: part{k: field, m: modBase}},
		{s: or(s.Seq, "{#}"), p: part{k: seqNum}},
		{s: or(s.Slot, "{%}"), p: part{k: slotNum}},
		{s: or(s.Input, "{}"), p: part{k: field}},
	}
	// Longest first, so that one string is never read as a shorter one
	// followed by text.
	for i := 1; i < len(toks); i++ {
		for j := i; j > 0 && len(toks[j].s) > len(toks[j-1].s); j-- {
			toks[j], toks[j-1] = toks[j-1], toks[j]
		}
	}
	return toks
}

// nextCandidate returns the index of the first byte of s where a
// replacement string may start: a "{" or the first byte of a custom string.
func nextCandidate(s string, toks []token) int {
	best := strings.IndexByte(s, '{')
	for _, tk := range toks {
		if tk.s[0] == '{' {
			continue
		}
		if i := strings.Index(s, tk.s); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

// match reads the replacement string at the start of s, returning it and
// its length.
func match(s string, toks []token, opts Options) (part, int, bool) {
	for _, tk := range toks {
		if strings.HasPrefix(s, tk.s) {
			return tk.p, len(tk.s), true
		}
	}
	if opts.Strings.Input != "" || s[0] != '{' {
		return part{}, 0, false
	}
	end := strings.IndexByte(s, '}')
	if end < 0 {
		return part{}, 0, false
	}
	body := s[1:end]
	for _, sf := range suffixes {
		head, ok := strings.CutSuffix(body, sf.s)
		if !ok || head == "" {
			continue
		}
		if n, err := strconv.Atoi(head); err == nil && head[0] != '+' {
			// {0} is {} in GNU parallel.
			return part{k: field, m: sf.m, pos: n}, end + 1, true
		}
		for i, name := range opts.Names {
			if name != "" && name == head {
				return part{k: field, m: sf.m, pos: i + 1}, end + 1, true
			}
		}
	}
	return part{}, 0, false
}

// HasInput reports whether the command holds a replacement string; when it
// does not, Expand appends the input as the last argument.
func (t *Template) HasInput() bool { return !t.appendInput }

// Expand returns the argv of the job with input, job number seq and slot.
// Without --shell it is the expanded words; with --shell it is
// [shell, "-c", script] (Options.ShellPath, else ShellPath). It is ExpandFields with the one field input.
func (t *Template) Expand(input string, seq int64, slot int) []string {
	return t.ExpandFields([]string{input}, seq, slot)
}

// Script returns the shell script of a --shell job: the words joined with
// spaces as written, with every substituted value quoted by Quote.
func (t *Template) Script(input string, seq int64, slot int) string {
	return t.ScriptFields([]string{input}, seq, slot)
}

// Display returns the command of a job as a shell would read it: the
// script with --shell, else the argv with each word quoted when needed. It
// is what --dry-run prints and the joblog's Command column holds.
func (t *Template) Display(input string, seq int64, slot int) string {
	return t.DisplayFields([]string{input}, seq, slot)
}

// ExpandFields returns the argv of the job whose flat list of fields is
// fields (every field of every argument, in order), with job number seq and
// slot. A field replacement string with no field to stand for ({} with no
// fields, {3} of two) yields no word, as the unquoted empty string does in
// GNU parallel's shell; an empty field yields an empty word.
func (t *Template) ExpandFields(fields []string, seq int64, slot int) []string {
	if t.shell {
		return []string{t.shellPath, "-c", t.ScriptFields(fields, seq, slot)}
	}
	argv := make([]string, 0, len(t.words)+len(fields))
	var b strings.Builder
	for i, w := range t.words {
		if t.context[i] {
			for _, f := range fields {
				argv = word(argv, &b, w, fields, f, true, seq, slot)
			}
			continue
		}
		argv = word(argv, &b, w, fields, "", false, seq, slot)
	}
	if t.appendInput {
		argv = append(argv, fields...)
	}
	return argv
}

// word appends the words w expands to. A value list of several fields
// breaks the word between them, as the shell splits GNU parallel's command
// line there: "pre-{}-post" with a, b is "pre-a", "b-post". With one (the
// -X repetition), {} is that field only.
func word(argv []string, b *strings.Builder, w []part, fields []string, one string, ctx bool, seq int64, slot int) []string {
	b.Reset()
	started := false
	for _, p := range w {
		if p.k == lit {
			b.WriteString(p.lit)
			started = true
			continue
		}
		if ctx && p.k == field && p.pos == 0 {
			b.WriteString(apply(p.m, one))
			started = true
			continue
		}
		vals := values(p, fields, seq, slot)
		for j, v := range vals {
			if j > 0 {
				argv = append(argv, b.String())
				b.Reset()
			}
			b.WriteString(v)
			started = true
		}
	}
	if started {
		argv = append(argv, b.String())
	}
	return argv
}

// values returns what p stands for: nothing for a field that is not there.
func values(p part, fields []string, seq int64, slot int) []string {
	switch p.k {
	case seqNum:
		return []string{strconv.FormatInt(seq, 10)}
	case slotNum:
		return []string{strconv.Itoa(slot)}
	}
	if p.pos == 0 {
		if p.m == modNone {
			return fields
		}
		out := make([]string, len(fields))
		for i, f := range fields {
			out[i] = apply(p.m, f)
		}
		return out
	}
	i := p.pos - 1
	if p.pos < 0 {
		i = len(fields) + p.pos
	}
	if i < 0 || i >= len(fields) {
		return nil
	}
	return []string{apply(p.m, fields[i])}
}

func apply(m mod, s string) string {
	switch m {
	case modNoExt:
		return StripExt(s)
	case modBase:
		return Base(s)
	case modDir:
		return Dir(s)
	case modBaseNoExt:
		return StripExt(Base(s))
	}
	return s
}

// ScriptFields returns the shell script of a --shell job with fields: the
// words joined with spaces as written, every substituted value quoted by
// Quote, several values of one string separated by spaces.
func (t *Template) ScriptFields(fields []string, seq int64, slot int) string {
	var b strings.Builder
	sep := func() {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
	}
	script := func(w []part, one string, ctx bool) {
		for _, p := range w {
			switch {
			case p.k == lit:
				b.WriteString(p.lit)
			case ctx && p.k == field && p.pos == 0:
				b.WriteString(Quote(apply(p.m, one)))
			default:
				for j, v := range values(p, fields, seq, slot) {
					if j > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(Quote(v))
				}
			}
		}
	}
	for i, w := range t.words {
		b.WriteString(t.seps[i])
		if t.context[i] {
			for j, f := range fields {
				if j > 0 {
					b.WriteByte(' ')
				}
				script(w, f, true)
			}
			continue
		}
		script(w, "", false)
	}
	if t.appendInput {
		for _, f := range fields {
			sep()
			b.WriteString(Quote(f))
		}
	}
	return b.String()
}

// DisplayFields returns the command of the job with fields as a shell
// would read it: ScriptFields with --shell, else Join of ExpandFields.
func (t *Template) DisplayFields(fields []string, seq int64, slot int) string {
	if t.shell {
		return t.ScriptFields(fields, seq, slot)
	}
	return Join(t.ExpandFields(fields, seq, slot))
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

// Dir returns the POSIX dirname of s ({//}): "." without a "/" (the
// empty string too, as perl's dirname, which GNU parallel uses), "/" for
// a file in the root, trailing slashes ignored.
func Dir(s string) string {
	if s == "" {
		return "."
	}
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

// Quote returns s as one word for a POSIX shell, as GNU parallel quotes
// it (its Q for Bourne shells): unchanged when it holds only letters,
// digits and -_.+/, else in single quotes, with each single quote written
// as '"'"' and the empty pair of quotes this leaves at either end
// dropped ("it's" is 'it'"'"'s', "'a" is "'"'a'). The empty string becomes
// a pair of single quotes. Being GNU's, a --shell command line and its length (-X, -s) are
// the same as GNU parallel's, and so are --dry-run's and the joblog's.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if isSafe(s) {
		return s
	}
	q := "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
	q = strings.TrimPrefix(q, "''")
	return strings.TrimSuffix(q, "''")
}

// quotedLen is len(Quote(s)) without building it.
func quotedLen(s string) int {
	if s == "" {
		return 2
	}
	if isSafe(s) {
		return len(s)
	}
	n := len(s) + 2 + 4*strings.Count(s, "'")
	if s[0] == '\'' {
		n -= 2
	}
	if s[len(s)-1] == '\'' {
		n -= 2
	}
	return n
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
		case strings.IndexByte("-_./+", c) >= 0:
		default:
			return false
		}
	}
	return true
}
