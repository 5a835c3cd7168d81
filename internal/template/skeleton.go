package template

import "strings"

// Skeleton returns the text every Display of t holds, in order: Display's
// result is always Skeleton()[0], then anything, then Skeleton()[1], and
// so on, the last piece ending it (one piece: Display is that text for
// every input). What stands between two pieces is what replacement
// strings ({}, {#}, {%}, ...) and the appended input expand to; the
// spaces next to it are left out of the pieces, since a field replacement
// string with no field to stand for expands to no word at all. A resumed
// run uses it to tell whether a joblog's Command column could have come
// from this command (see joblog.Fits); it never tells two inputs apart.
func (t *Template) Skeleton() []string {
	var pieces []string
	var cur strings.Builder
	hole := func() {
		pieces = append(pieces, strings.TrimRight(cur.String(), " "))
		cur.Reset()
	}
	afterHole := false
	write := func(s string) {
		if afterHole {
			s = strings.TrimLeft(s, " ")
			afterHole = false
		}
		cur.WriteString(s)
	}
	for i, w := range t.words {
		if !t.shell {
			if t.context[i] || !litOnly(w) {
				hole()
				afterHole = true
				continue
			}
			if i > 0 {
				write(" ")
			}
			write(Quote(w[0].lit))
			continue
		}
		write(t.seps[i])
		if t.context[i] {
			hole()
			afterHole = true
			continue
		}
		for _, p := range w {
			if p.k == lit {
				write(p.lit)
				continue
			}
			hole()
			afterHole = true
		}
	}
	if t.appendInput {
		hole()
		afterHole = true
	}
	pieces = append(pieces, cur.String())
	if afterHole {
		pieces[len(pieces)-1] = ""
	}
	return pieces
}

// litOnly reports whether word w holds no replacement string.
func litOnly(w []part) bool { return len(w) == 1 && w[0].k == lit }

// HasSlot reports whether the command holds the slot replacement string
// ({%}), whose value a job learns only when it starts.
func (t *Template) HasSlot() bool {
	for _, w := range t.words {
		for _, p := range w {
			if p.k == slotNum {
				return true
			}
		}
	}
	return false
}
