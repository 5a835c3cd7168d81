package input

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// ErrBadPattern is wrapped by the errors of Files for malformed patterns.
var ErrBadPattern = errors.New("bad pattern")

// ErrNoMatch is wrapped by the error that ends the sequence of Files when
// no pattern matched a single file.
var ErrNoMatch = errors.New("no file matches")

// maxAlternatives bounds the patterns one pattern's braces expand to.
const maxAlternatives = 1024

// FilesOptions configures Files.
type FilesOptions struct {
	// Patterns are the --files patterns, walked in this order.
	Patterns []string
	// Excludes are the --exclude patterns.
	Excludes []string
	// Hidden includes hidden files and directories (names starting with
	// "."; --hidden). Without it they are skipped, as a shell's "*" skips
	// them, unless a pattern element names them by starting with "." itself
	// (".github/**", "**/.env", ".*"). A pattern's fixed leading directory
	// is never skipped: "~/.config/**" walks ~/.config.
	Hidden bool
	// GitIgnore skips what .gitignore and .ignore files say to ignore
	// (--gitignore), with git's rules: the files of each directory walked,
	// and inside a git repository those of the directories above the walk
	// up to the repository's root, and its .git/info/exclude; a deeper file
	// overrides a shallower one, and "!" re-includes. A .git directory is
	// then skipped even with Hidden. A pattern's fixed leading directory is
	// walked even when ignored, as it was named.
	//
	// It is off by default, unlike fd's and ripgrep's: those search source
	// code, where ignored files are build output nobody wants to read, but
	// ration runs jobs over data, and data (datasets, downloads, results)
	// is what a repository's .gitignore most often lists. A run that
	// silently skipped its inputs would lose work without a sign; so what
	// --files walks is what the pattern says, as in a shell.
	GitIgnore bool
	// Warn receives the errors that do not stop the walk (an unreadable
	// subdirectory, a file that vanished, a pattern that matched nothing
	// while others matched). Nil drops them.
	Warn func(error)
	// Skip are the paths of the run's own output (its joblog, its
	// --results directory). A file or directory the walk meets that is
	// one of them (os.SameFile) is left out, with one warning: as inputs
	// they would change with how far the run got, so a --resume would
	// number its inputs otherwise and skip or repeat the wrong jobs.
	Skip []string
}

// Files yields the files matched by the patterns (--files), lazily: each
// directory is read when the walk reaches it, entries in lexical (byte)
// order, so the first jobs start while the rest of the tree is unread.
//
// Pattern syntax is that of path.Match within a path element ("*", "?",
// "[a-z]", "\\" escapes), with a shell's "[!a-z]" for path.Match's
// "[^a-z]", plus "**" as a whole element, which matches any
// number of directories, none included: "src/**/*.go" matches "src/a.go"
// and "src/x/y/b.go". Braces give alternatives as in a shell:
// "**/*.{go,py}" is "**/*.go" then "**/*.py" (braces nest; an unpaired
// brace, one without a comma, or "\\{" is literal). Hidden files and
// directories are skipped unless named (see FilesOptions.Hidden). A pattern
// without wildcards names a file, or a directory, which stands for every
// file below it. Patterns are cleaned first ("./src//a" is "src/a"), and
// paths are yielded as the pattern spells them ("src/a.go", "/abs/a.go").
//
// Only regular files (and symbolic links to them) are yielded; symbolic
// links to directories are not followed, so the walk cannot loop. A file
// matched by several patterns is yielded once, for the first. An exclude
// pattern without "/" is matched against the name of every file and
// directory ("*.min.js", "node_modules"); one with "/" against the whole
// path ("src/gen/**"); braces expand in excludes too. An excluded
// directory is not read.
//
// A pattern that matches no file is almost always a typo or the wrong
// directory. When some patterns matched, each one that did not is passed
// to Warn; when none matched, the sequence ends with their errors joined
// (errors.Join), so the run fails (ration exits 255). Each is a
// *PatternError whose Err is ErrNoMatch. GNU
// parallel runs nothing and exits 0 on empty input, and so does ration for
// empty arguments or an empty stream; but a --files run that found nothing
// did none of the work it was asked for, and a script must not take that
// for success.
//
// Files returns an error wrapping ErrBadPattern for a malformed pattern
// (a *PatternError for an exclude pattern), and the *PatternError of a
// pattern whose fixed leading directory does not exist (for braces: when no
// alternative's does). The errors the walk yields or passes to Warn are
// *PatternErrors too.
func Files(opts FilesOptions) (Seq, error) {
	pats := make([]pattern, 0, len(opts.Patterns))
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "" // no file is then known under two spellings
	}
	for _, p := range opts.Patterns {
		alts := expandBraces(p)
		if len(alts) > maxAlternatives {
			return nil, fmt.Errorf("%w: %q has %d brace alternatives, more than %d", ErrBadPattern, p, len(alts), maxAlternatives)
		}
		pat := pattern{raw: p}
		var statErr error
		for _, a := range alts {
			g, err := compile(a)
			if err != nil {
				return nil, err
			}
			g.raw = p
			g.absG = absGlob(g, a, cwd)
			if _, err := os.Stat(g.base); err != nil {
				statErr = cmp.Or(statErr, err)
				continue
			}
			pat.alts = append(pat.alts, g)
		}
		if len(pat.alts) == 0 {
			return nil, &PatternError{Pattern: p, Err: statErr}
		}
		pats = append(pats, pat)
	}
	var excl []*glob
	for _, p := range opts.Excludes {
		for _, a := range expandBraces(p) {
			g, err := compile(a)
			if err != nil {
				return nil, &PatternError{Pattern: p, Exclude: true, Err: err}
			}
			g.nameOnly = !strings.Contains(strings.TrimRight(a, "/"), "/")
			excl = append(excl, g)
		}
	}
	warn := opts.Warn
	if warn == nil {
		warn = func(error) {}
	}
	return func(yield func(string, error) bool) {
		var earlier []*glob
		var none []error
		skip := &skipper{paths: opts.Skip, warned: map[string]bool{}, warn: warn}
		for _, p := range pats {
			var st walkStats
			for _, g := range p.alts {
				w := walker{g: g, earlier: earlier, excl: excl, hidden: opts.Hidden, gitignore: opts.GitIgnore, warn: warn, yield: yield, cwd: cwd, skip: skip}
				ok := w.start()
				st.add(w.stats)
				if !ok {
					return
				}
				earlier = append(earlier, g)
			}
			if st.matched == 0 {
				none = append(none, st.noMatch(p.raw))
			}
		}
		if len(none) == len(pats) && len(pats) > 0 {
			yield("", errors.Join(none...))
			return
		}
		for _, err := range none {
			warn(err)
		}
	}, nil
}

// pattern is one --files pattern and the globs its braces expand to.
type pattern struct {
	raw  string
	alts []*glob
}

// walkStats counts the files a pattern's walk matched, and the hidden and
// ignored paths it skipped that match or may hold a match, for the message
// when it matched nothing.
type walkStats struct {
	matched, hidden, ignored int
}

// add adds the stats of another alternative of the same pattern. The
// alternatives walk the same tree, so the skipped paths are mostly the same
// ones: the larger count stands for both.
func (s *walkStats) add(o walkStats) {
	s.matched += o.matched
	s.hidden = max(s.hidden, o.hidden)
	s.ignored = max(s.ignored, o.ignored)
}

// noMatch is the error for a pattern that matched nothing, with the
// hidden and ignored paths skipped.
func (s walkStats) noMatch(raw string) error {
	return &PatternError{Pattern: raw, Hidden: s.hidden, Ignored: s.ignored, Err: ErrNoMatch}
}

// expandBraces returns the alternatives of p's brace expressions in order,
// as a shell expands them before it globs: "a{b,c}d" is "abd", "acd", and
// "{a,b}{1,2}" is "a1", "a2", "b1", "b2". A brace without its pair or
// without a comma at its own level, and an escaped one ("\\{"), is literal.
func expandBraces(p string) []string {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			end, commas := braceEnd(p, i)
			if end < 0 || len(commas) == 0 {
				continue
			}
			pre, post := p[:i], p[end+1:]
			var out []string
			from := i + 1
			for _, c := range append(commas, end) {
				for _, rest := range expandBraces(p[from:c] + post) {
					out = append(out, pre+rest)
					if len(out) > maxAlternatives {
						return out // Files reports the excess
					}
				}
				from = c + 1
			}
			return out
		}
	}
	return []string{p}
}

// braceEnd returns the index of the brace that closes the one at open and
// the indexes of the commas at its level, or -1.
func braceEnd(p string, open int) (end int, commas []int) {
	depth := 0
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, commas
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	return -1, nil
}

// glob is a compiled pattern.
type glob struct {
	raw      string
	abs      bool
	name     string   // first element, for name-only excludes
	base     string   // fixed leading directory ("." when none)
	baseSegs []string // its elements; empty for "." and "/"
	segs     []string // all elements of the pattern after base
	nameOnly bool     // exclude: match single names
	// absG is the pattern made absolute from the working directory (itself
	// when absolute; nil when unknown), so that a file matched under
	// another spelling (absolute, relative, through "..") is known.
	absG *glob
}

// absGlob returns the pattern alt, compiled as g, made absolute from the
// working directory cwd, whose wildcard characters are escaped; nil when
// cwd is unknown.
func absGlob(g *glob, alt, cwd string) *glob {
	if g.abs {
		return g
	}
	if cwd == "" {
		return nil
	}
	var b strings.Builder
	for _, c := range []byte(cwd) {
		if strings.IndexByte(`*?[\`, c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	a, err := compile(b.String() + "/" + alt)
	if err != nil {
		return nil
	}
	return a
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

func compile(p string) (*glob, error) {
	if p == "" {
		return nil, fmt.Errorf("%w: empty pattern", ErrBadPattern)
	}
	clean := path.Clean(p)
	abs := strings.HasPrefix(clean, "/")
	all := strings.Split(strings.TrimPrefix(clean, "/"), "/")
	if clean == "/" || clean == "." {
		all = nil
	}
	for i, s := range all {
		if s == "**" {
			continue
		}
		// A shell's negated class "[!...]" is path.Match's "[^...]".
		s = bangToCaret(s)
		all[i] = s
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("%w: %q", ErrBadPattern, p)
		}
	}
	n := 0
	for n < len(all) && !hasMeta(all[n]) {
		n++
	}
	g := &glob{raw: p, abs: abs}
	if len(all) > 0 {
		g.name = all[0]
	}
	if n == len(all) {
		// No wildcard: the path itself; a directory means all files below.
		n = max(len(all)-1, 0)
		g.segs = append(append([]string{}, all[n:]...), "**")
	} else {
		g.segs = all[n:]
	}
	g.baseSegs = all[:n]
	switch {
	case abs:
		g.base = "/" + strings.Join(g.baseSegs, "/")
	case n == 0:
		g.base = "."
	default:
		g.base = strings.Join(g.baseSegs, "/")
	}
	return g, nil
}

// isHidden reports whether a name is hidden.
func isHidden(name string) bool { return strings.HasPrefix(name, ".") }

// matchElem matches one element. Unless hidden, a hidden name matches only
// an element pattern that starts with "." itself, as in a shell.
func matchElem(pat, name string, hidden bool) bool {
	if !hidden && isHidden(name) && !strings.HasPrefix(pat, ".") {
		return false
	}
	ok, _ := path.Match(pat, name)
	return ok
}

// match reports whether the path elements rel (relative to base) match.
// Unless hidden, "**" does not cross hidden directories.
func match(pat, rel []string, hidden bool) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			for i := range len(rel) + 1 {
				if match(pat, rel[i:], hidden) {
					return true
				}
				if i < len(rel) && !hidden && isHidden(rel[i]) {
					return false
				}
			}
			return false
		}
		if len(rel) == 0 || !matchElem(pat[0], rel[0], hidden) {
			return false
		}
		pat, rel = pat[1:], rel[1:]
	}
	return len(rel) == 0
}

// mayContain reports whether a directory at rel may hold a match.
func mayContain(pat, rel []string, hidden bool) bool {
	switch {
	case len(rel) == 0:
		return len(pat) > 0
	case len(pat) == 0:
		return false
	case pat[0] == "**":
		// "**" takes rel[0] and stays, or takes nothing and is done.
		if (hidden || !isHidden(rel[0])) && mayContain(pat, rel[1:], hidden) {
			return true
		}
		return mayContain(pat[1:], rel, hidden)
	}
	return matchElem(pat[0], rel[0], hidden) && mayContain(pat[1:], rel[1:], hidden)
}

// matchesFull reports whether the full path elements full match g.
func (g *glob) matchesFull(full []string, isAbs, hidden bool) bool {
	if isAbs != g.abs {
		return false
	}
	if len(full) < len(g.baseSegs) {
		return false
	}
	for i, s := range g.baseSegs {
		if full[i] != s {
			return false
		}
	}
	return match(g.segs, full[len(g.baseSegs):], hidden)
}

type walker struct {
	g         *glob
	earlier   []*glob
	excl      []*glob
	hidden    bool
	gitignore bool
	warn      func(error)
	yield     func(string, error) bool
	abs       bool
	// full is baseSegs followed by the elements below base.
	full []string
	// ignores are the rules of the ignore files that apply (GitIgnore).
	ignores []ignoreSet
	stats   walkStats
	// cwd is the working directory, for the absolute paths of files that
	// earlier patterns may match under another spelling ("" if unknown).
	cwd  string
	skip *skipper
}

func (w *walker) start() bool {
	w.abs = w.g.abs
	w.full = append([]string(nil), w.g.baseSegs...)
	st, err := os.Stat(w.g.base)
	if err != nil {
		return w.yield("", &PatternError{Pattern: w.g.raw, Err: err})
	}
	if !st.IsDir() || (len(w.full) > 0 && w.excluded(w.full)) {
		return true // a file cannot hold the rest of the pattern
	}
	if w.gitignore {
		w.ignores = baseIgnoreSets(w.g.base, w.g.baseSegs, w.warn)
	}
	return w.dir(w.g.base, true)
}

func (w *walker) pathOf(full []string) string {
	s := strings.Join(full, "/")
	if w.abs {
		return "/" + s
	}
	return s
}

func (w *walker) excluded(full []string) bool {
	for _, e := range w.excl {
		if e.nameOnly {
			if ok, _ := path.Match(e.name, full[len(full)-1]); ok {
				return true
			}
		} else if e.matchesFull(full, w.abs, true) {
			return true
		}
	}
	return false
}

// dir walks the directory at dirPath; top is the pattern's base, whose
// ignore files start does read.
func (w *walker) dir(dirPath string, top bool) bool {
	ents, err := os.ReadDir(dirPath) // sorted by name
	if err != nil {
		w.warn(&PatternError{Pattern: w.g.raw, Err: err})
		return true
	}
	if w.gitignore && !top && slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return slices.Contains(ignoreFiles[:], e.Name()) }) {
		if rules := readIgnoreSet(dirPath, false, w.warn); len(rules) > 0 {
			w.ignores = append(w.ignores, ignoreSet{start: len(w.full), rules: rules})
			defer func(n int) { w.ignores = w.ignores[:n] }(len(w.ignores) - 1)
		}
	}
	for _, ent := range ents {
		w.full = append(w.full, ent.Name())
		ok := w.entry(ent)
		w.full = w.full[:len(w.full)-1]
		if !ok {
			return false
		}
	}
	return true
}

// entry handles the directory entry ent, whose path elements are w.full.
func (w *walker) entry(ent fs.DirEntry) bool {
	full := w.full
	name := ent.Name()
	p := w.pathOf(full)
	isDir := ent.IsDir()
	typ := ent.Type()
	rel := full[len(w.g.baseSegs):]
	if typ&fs.ModeSymlink != 0 {
		st, err := os.Stat(p)
		if err != nil {
			// Only a file it could match matters: a link to a directory
			// is not followed.
			if match(w.g.segs, rel, w.hidden) && !w.excluded(full) {
				w.warn(&PatternError{Pattern: w.g.raw, Err: err})
			}
			return true
		}
		if st.IsDir() {
			return true // not followed: no loops
		}
		typ = st.Mode().Type()
	}
	wanted := func(hidden bool) bool {
		if isDir {
			return mayContain(w.g.segs, rel, hidden)
		}
		return typ.IsRegular() && match(w.g.segs, rel, hidden)
	}
	if !wanted(w.hidden) {
		if !w.hidden && isHidden(name) && name != ".git" && wanted(true) { // nobody means .git
			w.stats.hidden++
		}
		return true
	}
	if w.excluded(full) || w.skip.skipped(p, name) {
		return true
	}
	if w.gitignore && (isDir && name == ".git" || ignored(w.ignores, full, isDir)) {
		w.stats.ignored++
		return true
	}
	if isDir {
		return w.dir(p, false)
	}
	w.stats.matched++
	if w.matchedEarlier(full) {
		return true
	}
	return w.yield(p, nil)
}

// matchedEarlier reports whether an earlier pattern matched the file at
// full, as this walk spells it or by its absolute path.
func (w *walker) matchedEarlier(full []string) bool {
	var abs []string
	for _, g := range w.earlier {
		if g.matchesFull(full, w.abs, w.hidden) {
			return true
		}
		if g.absG == nil || w.g.absG == nil {
			continue
		}
		if abs == nil {
			p := w.pathOf(full)
			if !w.abs {
				p = w.cwd + "/" + p
			}
			abs = strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
		}
		if g.absG.matchesFull(abs, true, w.hidden) {
			return true
		}
	}
	return false
}
