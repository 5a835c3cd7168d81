package main

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readGNUOptions returns the names in testdata/gnu_options.txt: GNU
// parallel 20221122's options, extracted from its option table.
func readGNUOptions(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("testdata/gnu_options.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) < 300 {
		t.Fatalf("testdata/gnu_options.txt holds %d options; GNU parallel 20221122 has 312", len(names))
	}
	return names
}

// gnuWritten is how a GNU parallel option name is written: -X, --name.
func gnuWritten(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// TestGNUOptionsCovered: every option of GNU parallel 20221122 is either a
// flag of ration run (its own, an alias or a no-op) or refused before any
// job runs with one line that names it and says what to do instead
// (gnuUnsupported), and exit status 255: none is a bare "unknown flag".
// And every hint is for an option GNU parallel has and ration run does
// not take.
func TestGNUOptionsCovered(t *testing.T) {
	names := readGNUOptions(t)
	var f runFlags
	fs := newRunFlagSet(&f)
	for _, name := range names {
		w := gnuWritten(name)
		if len(name) == 1 && fs.ShorthandLookup(name) != nil || len(name) > 1 && fs.Lookup(name) != nil {
			if _, ok := gnuUnsupported[name]; ok {
				t.Errorf("%s is a flag of ration run, and has a hint in gnuUnsupported", w)
			}
			continue
		}
		var out, errb bytes.Buffer
		code := runMain([]string{w, "x", "echo", ":::", "a"}, func(string) string { return "" }, strings.NewReader(""), &out, &errb)
		msg := errb.String()
		want := "ration run: unknown flag: " + w + " (GNU parallel's " + w + " is not supported: "
		if code != 255 || !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, ")\n") || strings.Count(msg, "\n") != 1 || out.Len() != 0 {
			t.Errorf("ration run %s x echo ::: a: exit %d, stdout %q, stderr %q; want exit 255 and one line starting %q", w, code, out.String(), msg, want)
		}
	}
	for name := range gnuUnsupported {
		if !slices.Contains(names, name) {
			t.Errorf("gnuUnsupported has %s, which GNU parallel 20221122 does not have", gnuWritten(name))
		}
	}
}

// TestCompatListsUnsupported: docs/compat.md names every option
// gnuUnsupported refuses (as `--name` or `--name ARG`), so that the page
// and the hints cannot drift apart.
func TestCompatListsUnsupported(t *testing.T) {
	doc, err := os.ReadFile(compatDoc)
	if err != nil {
		t.Fatal(err)
	}
	for name := range gnuUnsupported {
		w := gnuWritten(name)
		if !regexp.MustCompile("`" + regexp.QuoteMeta(w) + "[` ]").Match(doc) {
			t.Errorf("%s does not name %s, which ration run refuses with a hint", compatDoc, w)
		}
	}
}
