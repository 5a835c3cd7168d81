package runcmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// gnuArgs returns the arguments of `ration run` with GNU parallel's
// options from elsewhere put before them, as GNU parallel 20221122 reads
// them: the options of every --profile/-J file (in order), then those of
// $PARALLEL, then the command line's. Words of a profile or of $PARALLEL
// that are no options (a command prefix such as nice) go before the
// command, in the same order. A profile NAME is read from every config
// directory that holds it ($PARALLEL_HOME, $XDG_CONFIG_HOME/parallel,
// each of $XDG_CONFIG_DIRS/parallel, $HOME/.parallel); one starting with
// / or ./ is that file. Each line of a profile is split into words as a
// shell would (quotes and backslashes), and lines starting with # are
// comments. Unlike GNU parallel, a profile found nowhere is an error (GNU
// parallel ignores it), and /etc/parallel/config, ~/.parallel/config and
// ~/.parallelrc are not read without -J (a GNU parallel configuration
// such as -S host would otherwise change every ration run). With --plain
// on the command line neither profiles nor $PARALLEL are read, as GNU
// parallel.
func gnuArgs(args []string, getenv func(string) string) ([]string, error) {
	cliOpts, cliRest, f, err := splitOptions(args)
	if err != nil {
		// The real parse reports it.
		return args, nil
	}
	env := getenv("PARALLEL")
	if f.override.plain || len(f.gnuCLI.profiles) == 0 && strings.TrimSpace(env) == "" {
		return args, nil
	}
	var opts, rest []string
	for _, name := range f.gnuCLI.profiles {
		words, err := readProfile(name, getenv)
		if err != nil {
			return nil, flagErr("--profile", err)
		}
		o, r, _, err := splitOptions(words)
		if err != nil {
			return nil, flagErr("--profile", fmt.Errorf("%s: %w", name, err))
		}
		opts, rest = append(opts, o...), append(rest, r...)
	}
	words, err := shellWords(env)
	if err != nil {
		return nil, flagErr("PARALLEL", err)
	}
	o, r, _, err := splitOptions(words)
	if err != nil {
		return nil, flagErr("PARALLEL", err)
	}
	opts, rest = append(opts, o...), append(rest, r...)
	if len(rest) == 0 {
		return append(opts, args...), nil
	}
	out := append(append(opts, cliOpts...), "--")
	return append(append(out, rest...), cliRest...), nil
}

// splitOptions parses words as `ration run`'s flags and returns the
// options, the words after them (the command and its inputs; a "--"
// between them is dropped) and the flags.
func splitOptions(words []string) (opts, rest []string, f runFlags, err error) {
	fs := newRunFlagSet(&f)
	if err := fs.Parse(words); err != nil {
		return nil, nil, f, err
	}
	rest = fs.Args()
	opts = words[:len(words)-len(rest)]
	if n := len(opts); n > 0 && opts[n-1] == "--" {
		opts = opts[:n-1]
	}
	return opts, rest, f, nil
}

// readProfile returns the words of the profile name (see gnuArgs).
func readProfile(name string, getenv func(string) string) ([]string, error) {
	var paths []string
	if strings.HasPrefix(name, "/") || strings.HasPrefix(name, "./") {
		paths = []string{name}
	} else {
		for _, dir := range gnuConfigDirs(getenv) {
			paths = append(paths, filepath.Join(dir, name))
		}
	}
	var words []string
	found := false
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, unwrapPathErr(err))
		}
		found = true
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			w, err := shellWords(line)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			words = append(words, w...)
		}
	}
	if !found {
		return nil, fmt.Errorf("no profile %q in %s", name, strings.Join(paths, ", "))
	}
	return words, nil
}

// gnuConfigDirs are GNU parallel's config directories that exist.
func gnuConfigDirs(getenv func(string) string) []string {
	cands := []string{getenv("PARALLEL_HOME")}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		cands = append(cands, filepath.Join(x, "parallel"))
	}
	for _, x := range strings.Split(getenv("XDG_CONFIG_DIRS"), ":") {
		if x != "" {
			cands = append(cands, filepath.Join(x, "parallel"))
		}
	}
	if h := getenv("HOME"); h != "" {
		cands = append(cands, filepath.Join(h, ".parallel"))
	}
	var dirs []string
	for _, d := range cands {
		if st, err := os.Stat(d); d != "" && err == nil && st.IsDir() {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// shellWords splits s into words as a POSIX shell would, without
// expansions (perl's Text::ParseWords::shellwords, which GNU parallel
// uses): blanks separate words; '...' is literal; in "..." a backslash
// escapes the next character; elsewhere a backslash escapes the next
// character.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unmatched ' in %q", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unmatched \" in %q", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
