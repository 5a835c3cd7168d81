package input

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// ErrBadPattern is wrapped by the errors of Files for malformed patterns.
var ErrBadPattern = errors.New("bad pattern")

// FilesOptions configures Files.
type FilesOptions struct {
	// Patterns are the --files patterns, walked in this order.
	Patterns []string
	// Excludes are the --exclude patterns.
	Excludes []string
	// Warn receives the errors that do not stop the walk (an unreadable
	// subdirectory, a file that vanished). Nil drops them.
	Warn func(error)
}

// Files yields the files matched by the patterns (--files), lazily: each
// directory is read when the walk reaches it, entries in lexical (byte)
// order, so the first jobs start while the rest of the tree is unread.
//
// Pattern syntax is that of path.Match within a path element ("*", "?",
// "[a-z]", "\\" escapes), plus "**" as a whole element, which matches any
// number of directories, none included: "src/**/*.go" matches "src/a.go"
// and "src/x/y/b.go". "*" matches names starting with "." too. A pattern
// without wildcards names a file, or a directory, which stands for every
// file below it. Patterns are cleaned first ("./src//a" is "src/a"), and
// paths are yielded as the pattern spells them ("src/a.go", "/abs/a.go").
//
// Only regular files (and symbolic links to them) are yielded; symbolic
// links to directories are not followed, so the walk cannot loop. A file
// matched by several patterns is yielded once, for the first. An exclude
// pattern without "/" is matched against the name of every file and
// directory ("*.min.js", "node_modules"); one with "/" against the whole
// path ("src/gen/**"). An excluded directory is not read.
//
// Files returns an error wrapping ErrBadPattern for a malformed pattern, and
// the error of a pattern whose fixed leading directory does not exist.
func Files(opts FilesOptions) (Seq, error) {
	pats := make([]*glob, 0, len(opts.Patterns))
	for _, p := range opts.Patterns {
		g, err := compile(p)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(g.base); err != nil {
			return nil, fmt.Errorf("--files %s: %w", p, err)
		}
		pats = append(pats, g)
	}
	var excl []*glob
	for _, p := range opts.Excludes {
		g, err := compile(p)
		if err != nil {
			return nil, fmt.Errorf("--exclude: %w", err)
		}
		g.nameOnly = !strings.Contains(strings.TrimRight(p, "/"), "/")
		excl = append(excl, g)
	}
	warn := opts.Warn
	if warn == nil {
		warn = func(error) {}
	}
	return func(yield func(string, error) bool) {
		for i, g := range pats {
			w := walker{g: g, earlier: pats[:i], excl: excl, warn: warn, yield: yield}
			if !w.start() {
				return
			}
		}
	}, nil
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
	for _, s := range all {
		if s == "**" {
			continue
		}
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

// match reports whether the path elements rel (relative to base) match.
func match(pat, rel []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range len(rel) + 1 {
				if match(pat, rel[i:]) {
					return true
				}
			}
			return false
		}
		if len(rel) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], rel[0]); !ok {
			return false
		}
		pat, rel = pat[1:], rel[1:]
	}
	return len(rel) == 0
}

// mayContain reports whether a directory at rel may hold a match.
func mayContain(pat, rel []string) bool {
	for len(rel) > 0 {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[0], rel[0]); !ok {
			return false
		}
		pat, rel = pat[1:], rel[1:]
	}
	return len(pat) > 0
}

// matchesFull reports whether the full path elements full match g.
func (g *glob) matchesFull(full []string, isAbs bool) bool {
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
	return match(g.segs, full[len(g.baseSegs):])
}

type walker struct {
	g       *glob
	earlier []*glob
	excl    []*glob
	warn    func(error)
	yield   func(string, error) bool
	abs     bool
	// rel holds the elements below base; full is baseSegs + rel.
	full []string
}

func (w *walker) start() bool {
	w.abs = w.g.abs
	w.full = append([]string(nil), w.g.baseSegs...)
	st, err := os.Stat(w.g.base)
	if err != nil {
		return w.yield("", fmt.Errorf("--files %s: %w", w.g.raw, err))
	}
	if !st.IsDir() || (len(w.full) > 0 && w.excluded(w.full)) {
		return true // a file cannot hold the rest of the pattern
	}
	return w.dir(w.g.base)
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
		} else if e.matchesFull(full, w.abs) {
			return true
		}
	}
	return false
}

func (w *walker) dir(dirPath string) bool {
	ents, err := os.ReadDir(dirPath) // sorted by name
	if err != nil {
		w.warn(fmt.Errorf("--files %s: %w", w.g.raw, err))
		return true
	}
	rel0 := len(w.g.baseSegs)
	for _, ent := range ents {
		name := ent.Name()
		w.full = append(w.full, name)
		full := w.full
		p := w.pathOf(full)
		isDir := ent.IsDir()
		typ := ent.Type()
		if typ&fs.ModeSymlink != 0 {
			st, err := os.Stat(p)
			if err != nil {
				w.warn(fmt.Errorf("--files %s: %w", w.g.raw, err))
				w.full = w.full[:len(w.full)-1]
				continue
			}
			if st.IsDir() {
				w.full = w.full[:len(w.full)-1]
				continue // not followed: no loops
			}
			typ = st.Mode().Type()
		}
		ok := true
		switch {
		case w.excluded(full):
		case isDir:
			if mayContain(w.g.segs, full[rel0:]) {
				ok = w.dir(p)
			}
		case typ.IsRegular() && match(w.g.segs, full[rel0:]) && !w.matchedEarlier(full):
			ok = w.yield(p, nil)
		}
		w.full = w.full[:len(full)-1]
		if !ok {
			return false
		}
	}
	return true
}

func (w *walker) matchedEarlier(full []string) bool {
	for _, g := range w.earlier {
		if g.matchesFull(full, w.abs) {
			return true
		}
	}
	return false
}
