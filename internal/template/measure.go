package template

import "strings"

// numLen is what {#} and {%} count for in a command line's length: the
// number is not known when the line is filled, and 10 digits is more than
// any run reaches.
const numLen = 10

// Measurer measures the command line of a job while its fields are added
// one at a time, as GNU parallel measures it for -X, -m and -s: the length
// of the line a shell would read, every substituted value quoted by Quote
// and words separated by one space. Its Add is what gnuinput.Batches asks to
// keep a line within -s. A Measurer is not safe for concurrent use; make
// one per batching stream.
type Measurer struct {
	t     *Template
	base  int
	n     int
	total int
}

// Measurer returns a Measurer of t's lines, with no field added.
func (t *Template) Measurer() *Measurer {
	m := &Measurer{t: t}
	for i, w := range t.words {
		m.base += len(t.seps[i])
		if t.context[i] {
			continue
		}
		for _, p := range w {
			switch p.k {
			case lit:
				m.base += len(p.lit)
			case seqNum, slotNum:
				m.base += numLen
			}
		}
	}
	m.total = m.base
	return m
}

// Reset forgets the fields added.
func (m *Measurer) Reset() { m.n, m.total = 0, m.base }

// Add adds the fields of one argument and returns the length of the line
// with every field added so far.
func (m *Measurer) Add(fields []string) int {
	for _, f := range fields {
		m.n++
		sp := 0
		if m.n > 1 {
			sp = 1
		}
		for i, w := range m.t.words {
			ctx := m.t.context[i]
			if ctx {
				m.total += sp
			}
			for _, p := range w {
				switch {
				case p.k == lit && ctx:
					m.total += len(p.lit)
				case (p.k == seqNum || p.k == slotNum) && ctx:
					m.total += numLen
				case p.k == field && p.pos == 0:
					m.total += quotedLen(apply(p.m, f))
					if !ctx {
						m.total += sp
					}
				case p.k == field && p.pos == m.n:
					m.total += quotedLen(apply(p.m, f))
				}
			}
		}
		if m.t.appendInput {
			m.total += 1 + quotedLen(f)
		}
	}
	return m.total
}

// ShellSyntax returns the first word of argv that a shell would read as
// syntax (a pipe, a redirection, a command separator, a variable or a
// command substitution) and true; "" and false when there is none. A
// command holding one most likely meant --shell: without it the word
// reaches the program literally.
func ShellSyntax(argv []string) (string, bool) {
	for _, w := range argv {
		switch w {
		case "|", "||", "&&", ";", "&", ">", ">>", "<", "<<", "2>", "2>&1", "|&", "(", ")":
			return w, true
		}
		if strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") || strings.HasPrefix(w, "<") ||
			strings.HasSuffix(w, ";") || strings.Contains(w, "`") || strings.Contains(w, "$(") {
			return w, true
		}
		if i := strings.IndexByte(w, '$'); i >= 0 && i+1 < len(w) {
			c := w[i+1]
			if c == '{' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '?' {
				return w, true
			}
		}
		if strings.Contains(w, "|") && !strings.Contains(w, "{") {
			// "a|b" as one word is a regexp argument more often than a
			// pipe; only a word that starts or ends with it is a pipe.
			if strings.HasPrefix(w, "|") || strings.HasSuffix(w, "|") {
				return w, true
			}
		}
	}
	return "", false
}
