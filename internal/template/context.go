package template

// addShellGroups adds the argv word parts, preceded by sep, to a --shell
// template with -X, as GNU parallel finds the text -X repeats: its command
// line is one string, and what is repeated once per field is the group
// between blanks that holds {} (or a modifier of it), not the whole argv
// word. So -X 'printf "%s\n" {}' is `printf "%s\n" a b`, not
// `printf "%s\n" a printf "%s\n" b`. The groups are GNU parallel's: a
// space ends one, a tab ends one and starts the next (which holds it, so
// it is repeated with it), quotes do not hold one together, and a newline
// does not end one. The spaces stay as they are, as the separators (seps)
// of the words made.
func (t *Template) addShellGroups(sep string, parts []part) {
	var cur []part
	add := func() {
		ctx := false
		for _, p := range cur {
			ctx = ctx || p.k == field && p.pos == 0
		}
		t.words = append(t.words, mergeLits(cur))
		t.context = append(t.context, ctx)
		t.seps = append(t.seps, sep)
		cur, sep = nil, ""
	}
	for _, p := range parts {
		if p.k != lit {
			cur = append(cur, p)
			continue
		}
		start := 0
		for i := 0; i < len(p.lit); i++ {
			c := p.lit[i]
			if c != ' ' && c != '\t' {
				continue
			}
			if i > start {
				cur = append(cur, part{k: lit, lit: p.lit[start:i]})
			}
			if len(cur) > 0 {
				add()
			}
			start = i + 1
			if c == ' ' {
				sep += " "
			} else {
				cur = []part{{k: lit, lit: "\t"}}
			}
		}
		if start < len(p.lit) {
			cur = append(cur, part{k: lit, lit: p.lit[start:]})
		}
	}
	if len(cur) == 0 {
		cur = []part{{k: lit}}
	}
	add()
}
