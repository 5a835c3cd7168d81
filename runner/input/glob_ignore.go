package input

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ignoreRule is one pattern line of a .gitignore or .ignore file.
type ignoreRule struct {
	segs    []string // as match takes them; unanchored rules start with "**"
	negate  bool     // "!pattern": re-include
	dirOnly bool     // "pattern/": directories only
}

// ignoreSet is the rules of the ignore files of one directory. A path is
// matched against a rule relative to that directory: prefix, then the
// elements of the walked path from index start on.
type ignoreSet struct {
	prefix []string
	start  int
	rules  []ignoreRule
}

// parseIgnore parses the text of a .gitignore file, as gitignore(5) says:
// blank lines and lines starting with "#" are skipped; trailing spaces are
// dropped unless escaped with "\"; a leading "!" negates, "\!" and "\#"
// are literal; a trailing "/" matches directories only; a pattern with a
// "/" before its end is anchored to the file's directory, one without
// matches a name at any depth; "**" as a whole element matches any number
// of directories, and a trailing "/**" matches everything inside (not the
// directory itself); "*", "?" and "[...]" ("[!...]" negated) do not match
// "/".
func parseIgnore(text string) []ignoreRule {
	var rules []ignoreRule
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = trimUnescapedSpace(line)
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		segs := strings.Split(line, "/")
		for i, s := range segs {
			segs[i] = bangToCaret(s)
		}
		if !anchored {
			segs = append([]string{"**"}, segs...)
		}
		if segs[len(segs)-1] == "**" {
			segs = append(segs, "*") // "dir/**": what is inside, at least one element
		}
		r.segs = segs
		rules = append(rules, r)
	}
	return rules
}

// trimUnescapedSpace drops trailing spaces that no backslash escapes.
func trimUnescapedSpace(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	if strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-2] + " "
	}
	return s
}

// bangToCaret turns gitignore's "[!...]" into path.Match's "[^...]".
func bangToCaret(s string) string {
	if !strings.Contains(s, "[!") {
		return s
	}
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\':
			i++
		case b[i] == '[' && i+1 < len(b) && b[i+1] == '!':
			b[i+1] = '^'
		}
	}
	return string(b)
}

// ignored reports whether the path full (a directory if dir) is ignored by
// the sets, the deepest set first and, within a set, its last matching
// rule, as git decides.
func ignored(sets []ignoreSet, full []string, dir bool) bool {
	for i := len(sets) - 1; i >= 0; i-- {
		s := &sets[i]
		rel := full[s.start:]
		if len(s.prefix) > 0 {
			rel = append(append(make([]string, 0, len(s.prefix)+len(rel)), s.prefix...), rel...)
		}
		for j := len(s.rules) - 1; j >= 0; j-- {
			r := &s.rules[j]
			if r.dirOnly && !dir {
				continue
			}
			if match(r.segs, rel, true) {
				return !r.negate
			}
		}
	}
	return false
}

// ignoreFiles are the per-directory ignore files read with GitIgnore.
var ignoreFiles = [...]string{".gitignore", ".ignore"}

// readIgnoreSet reads the ignore files of dir (and, when infoExclude,
// .git/info/exclude). Missing files are no rules; other read errors go to
// warn.
func readIgnoreSet(dir string, infoExclude bool, warn func(error)) []ignoreRule {
	var rules []ignoreRule
	names := ignoreFiles[:]
	if infoExclude {
		names = append([]string{".git/info/exclude"}, names...)
	}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				warn(&PatternError{Err: err})
			}
			continue
		}
		rules = append(rules, parseIgnore(string(b))...)
	}
	return rules
}

// baseIgnoreSets returns the rules that apply to a walk starting at base,
// whose path elements are baseSegs: those of base itself and, inside a git
// repository, of every directory above it up to the repository's root
// (the directory holding .git), the root's .git/info/exclude included.
func baseIgnoreSets(base string, baseSegs []string, warn func(error)) []ignoreSet {
	abs, err := filepath.Abs(base)
	if err != nil {
		return nil
	}
	// Directories from base up to the repository root, base first.
	var dirs []string
	root := -1
	for d := abs; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if st, err := os.Stat(filepath.Join(d, ".git")); err == nil && st.IsDir() || err == nil && st.Mode().IsRegular() {
			root = len(dirs) - 1
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if root < 0 {
		dirs = dirs[:1] // outside a repository only base's own files count
	}
	var sets []ignoreSet
	for i := len(dirs) - 1; i >= 0; i-- {
		rules := readIgnoreSet(dirs[i], i == root, warn)
		if len(rules) == 0 {
			continue
		}
		var prefix []string
		if i > 0 {
			rel, err := filepath.Rel(dirs[i], abs)
			if err != nil {
				continue
			}
			prefix = strings.Split(filepath.ToSlash(rel), "/")
		}
		sets = append(sets, ignoreSet{prefix: prefix, start: len(baseSegs), rules: rules})
	}
	return sets
}
