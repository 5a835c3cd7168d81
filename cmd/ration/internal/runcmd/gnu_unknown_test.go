package runcmd

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// readGNUOptions returns the entries of testdata/gnu_options.txt: GNU
// parallel 20221122's options, extracted from its option table, each with
// all its names.
func readGNUOptions(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open("testdata/gnu_options.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var entries [][]string
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			entries = append(entries, strings.Fields(line))
			n += len(entries[len(entries)-1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 312 {
		t.Fatalf("testdata/gnu_options.txt holds %d names; GNU parallel 20221122 has 312", n)
	}
	return entries
}

// gnuWritten is how a GNU parallel option name is written: -X, --name.
func gnuWritten(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// accepted reports whether fs has GNU parallel's option name as a flag.
func accepted(fs *pflag.FlagSet, name string) bool {
	if len(name) == 1 {
		return fs.ShorthandLookup(name) != nil
	}
	return fs.Lookup(name) != nil
}

// TestGNUOptionsCovered: every option of GNU parallel 20221122 is either a
// flag of ration run (its own, an alias or a no-op) or refused before any
// job runs with one line that names it and says what to do instead
// (gnuUnsupported), and exit status 255: none is a bare "unknown flag".
// And every hint is for an option GNU parallel has and ration run does
// not take.
func TestGNUOptionsCovered(t *testing.T) {
	names := slices.Concat(readGNUOptions(t)...)
	var f runFlags
	fs := newRunFlagSet(&f)
	for _, name := range names {
		w := gnuWritten(name)
		if accepted(fs, name) {
			if _, _, ok := unsupportedHint(name); ok {
				t.Errorf("%s is a flag of ration run, and has a hint in gnuUnsupported", w)
			}
			continue
		}
		var out, errb bytes.Buffer
		code := runMain([]string{w, "x", "echo", ":::", "a"}, func(string) string { return "" }, strings.NewReader(""), &out, &errb)
		msg := errb.String()
		want := "ration run: unknown flag: " + w + " (GNU parallel's " + w
		if code != 255 || !strings.HasPrefix(msg, want) || !strings.Contains(msg, " is not supported: ") ||
			!strings.HasSuffix(msg, ")\n") || strings.Count(msg, "\n") != 1 || out.Len() != 0 {
			t.Errorf("ration run %s x echo ::: a: exit %d, stdout %q, stderr %q; want exit 255 and one line starting %q", w, code, out.String(), msg, want)
		}
	}
	for name := range gnuUnsupported {
		if !slices.Contains(names, name) {
			t.Errorf("gnuUnsupported has %s, which GNU parallel 20221122 does not have", gnuWritten(name))
		}
	}
	for alias, name := range gnuUnsupportedAliases {
		if _, ok := gnuUnsupported[name]; !ok || !slices.Contains(names, alias) {
			t.Errorf("gnuUnsupportedAliases: %s stands for %s, which is not in gnuUnsupported, or GNU parallel 20221122 does not have it", gnuWritten(alias), gnuWritten(name))
		}
	}
	// The aliases are GNU parallel's: each with its first name in one entry.
	for _, e := range readGNUOptions(t) {
		for _, n := range e[1:] {
			if to, ok := gnuUnsupportedAliases[n]; ok && to != e[0] {
				t.Errorf("gnuUnsupportedAliases: %s stands for %s; GNU parallel's option is %s", gnuWritten(n), gnuWritten(to), gnuWritten(e[0]))
			}
		}
		if _, ok := gnuUnsupported[e[0]]; ok {
			for _, n := range e[1:] {
				if accepted(fs, n) {
					continue // -q: ration's --quiet
				}
				if gnuUnsupportedAliases[n] != e[0] {
					t.Errorf("%s is another name of GNU parallel's %s, missing from gnuUnsupportedAliases", gnuWritten(n), gnuWritten(e[0]))
				}
			}
		}
	}
}

// TestCompatListsUnsupported: docs/compat.md names every option
// gnuUnsupported refuses (as `--name` or `--name ARG`), so that the page
// and the hints cannot drift apart.
func TestCompatListsUnsupported(t *testing.T) {
	const compatDoc = "../../../../docs/compat.md"
	doc, err := os.ReadFile(compatDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Concat(slices.Collect(maps.Keys(gnuUnsupported)), slices.Collect(maps.Keys(gnuUnsupportedAliases))) {
		w := gnuWritten(name)
		if !regexp.MustCompile("`" + regexp.QuoteMeta(w) + "[` ]").Match(doc) {
			t.Errorf("%s does not name %s, which ration run refuses with a hint", compatDoc, w)
		}
	}
}

// TestGNUAbbreviations: GNU parallel reads an abbreviation of a long
// option (Getopt::Long) when the names it begins are all of one option;
// ration run takes whole names only, and its error then names that option
// (the flag to write, or the option's hint). Where GNU parallel finds the
// abbreviation ambiguous, the error names none. Every prefix of every
// long name of testdata/gnu_options.txt is tried (except those that also
// begin a flag of ration's own, which ration may find ambiguous).
func TestGNUAbbreviations(t *testing.T) {
	entries := readGNUOptions(t)
	var f runFlags
	fs := newRunFlagSet(&f)
	known := map[string]bool{}
	for _, e := range entries {
		for _, n := range e {
			known[n] = true
		}
	}
	// value is what a name stands for in ration run: its flag's value,
	// "" for a name ration run does not take.
	value := func(name string) string {
		if fl := fs.Lookup(name); fl != nil {
			return fmt.Sprintf("%T %p", fl.Value, fl.Value)
		}
		return ""
	}
	tried := map[string]bool{}
	for _, e := range entries {
		for _, name := range e {
			for n := 2; n < len(name); n++ {
				p := name[:n]
				if tried[p] || known[p] || fs.Lookup(p) != nil {
					continue
				}
				tried[p] = true
				var of [][]string // the entries p abbreviates
				for _, e2 := range entries {
					if slices.ContainsFunc(e2, func(n string) bool { return len(n) > 1 && strings.HasPrefix(n, p) }) {
						of = append(of, e2)
					}
				}
				_, _, err := parseRunFlags([]string{"--" + p, "x"})
				msg := ""
				if err != nil {
					msg = err.Error()
				}
				_, said, named := strings.Cut(msg, "GNU parallel reads it as --")
				said, _, _ = strings.Cut(said, ",")
				said, _, _ = strings.Cut(said, ";")
				switch {
				case err == nil || !strings.HasPrefix(msg, "unknown flag: --"+p):
					t.Errorf("--%s: %v, want an unknown flag", p, err)
				case len(of) > 1 && named:
					t.Errorf("--%s is ambiguous in GNU parallel (%v), but ration says %q", p, of, msg)
				case len(of) == 1 && named && !slices.Contains(of[0], said) && (value(said) == "" || value(said) != value(of[0][0])):
					t.Errorf("--%s: ration says %q; GNU parallel reads it as --%s", p, msg, of[0][0])
				case len(of) == 1 && !named && !ownFlagBegins(fs, p, value(of[0][0])):
					t.Errorf("--%s: ration says %q; GNU parallel reads it as --%s", p, msg, of[0][0])
				}
			}
		}
	}
	if len(tried) < 1000 {
		t.Errorf("only %d prefixes tried", len(tried))
	}
}

// ownFlagBegins reports whether p begins a flag of fs whose value is not
// v: one of ration's own, which makes p ambiguous for ration run.
func ownFlagBegins(fs *pflag.FlagSet, p, v string) bool {
	own := false
	fs.VisitAll(func(fl *pflag.Flag) {
		if strings.HasPrefix(fl.Name, p) && fmt.Sprintf("%T %p", fl.Value, fl.Value) != v {
			own = true
		}
	})
	return own
}
