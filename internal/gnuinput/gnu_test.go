package gnuinput_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/runner/input"
)

var update = flag.Bool("update", false, "rewrite testdata/gnu.golden from GNU parallel's output")

// gnuCase is one GNU parallel command line: flags, command, then the input
// sources exactly as GNU parallel reads them (":::", "::::" FILE, ":::+").
// Files named in sources are written from files first; stdin is read when
// there is no source.
type gnuCase struct {
	name  string
	flags []string
	cmd   []string
	srcs  []string
	files map[string]string
	stdin string
}

var gnuCases = []gnuCase{
	{name: "product", cmd: []string{"echo"}, srcs: []string{":::", "A", "B", ":::", "C", "D"}},
	{name: "positional", cmd: []string{"echo", "{2}", "{1}", "{-1}"}, srcs: []string{":::", "a", "b", ":::", "c", "d"}},
	{name: "three", cmd: []string{"echo", "{3}{1}"}, srcs: []string{":::", "a", "b", ":::", "c", ":::", "e", "f"}},
	{name: "linked", cmd: []string{"echo"}, srcs: []string{":::", "a", "b", "c", ":::+", "1", "2"}},
	{name: "linked-product", cmd: []string{"echo"}, srcs: []string{":::", "a", "b", ":::+", "1", "2", "3", ":::", "x", "y"}},
	{name: "link", flags: []string{"--link"}, cmd: []string{"echo"}, srcs: []string{":::", "a", "b", "c", ":::", "1", "2"}},
	{name: "link-first-short", flags: []string{"--link"}, cmd: []string{"echo"}, srcs: []string{":::", "a", ":::", "1", "2", "3"}},
	{name: "files", cmd: []string{"echo"}, srcs: []string{"::::", "f1", "::::", "f2"}, files: map[string]string{"f1": "1\n2\n", "f2": "a\nb\n"}},
	{name: "file-linked", cmd: []string{"echo", "{1}-{2}"}, srcs: []string{":::", "x", "y", "z", "::::+", "f1"}, files: map[string]string{"f1": "1\n2\n"}},
	{name: "modifiers", cmd: []string{"echo", "{1.}", "{1/}", "{1//}", "{2/.}", "{.}", "{/}"}, srcs: []string{":::", "/p/q.r", "a", ":::", "s/t.u"}},
	{name: "missing-positional", cmd: []string{"echo", "{1}", "{3}", "x"}, srcs: []string{":::", "a", "b"}},
	{name: "literal-braces", cmd: []string{"echo", "{}}", "{.", "{x}", "{0}", "{+1}", "{1.}"}, srcs: []string{":::", "a.b"}},
	{name: "quotes", cmd: []string{"echo", "{}", "x{}y"}, srcs: []string{":::", "a b", "it's", "", "-n"}},
	{name: "n2", flags: []string{"-n2"}, cmd: []string{"echo", "{1}", "x", "{2}"}, srcs: []string{":::", "a", "b", "c", "d", "e"}},
	{name: "n2-context", flags: []string{"-n2"}, cmd: []string{"echo", "pre-{}-post"}, srcs: []string{":::", "a", "b", "c", "d", "e"}},
	{name: "N2-context", flags: []string{"-N2"}, cmd: []string{"echo", "pre-{}-post", "{2}"}, srcs: []string{":::", "a", "b", "c"}},
	{name: "N2-two-sources", flags: []string{"-N2"}, cmd: []string{"echo", "{1}", "{2}"}, srcs: []string{":::", "a", "b", "c", ":::", "x", "y"}},
	{name: "n2-two-sources", flags: []string{"-n2"}, cmd: []string{"echo"}, srcs: []string{":::", "a", "b", "c", ":::", "x", "y"}},
	{name: "n3-modifiers", flags: []string{"-n3"}, cmd: []string{"echo", "{1.}", "{3/}", "{2//}"}, srcs: []string{":::", "a/b.c", "d/e.f", "g/h.i"}},
	{name: "N0", flags: []string{"-N0"}, cmd: []string{"echo", "foo"}, srcs: []string{":::", "a", "b"}},
	{name: "X", flags: []string{"-X"}, cmd: []string{"echo", "pre-{}-post"}, srcs: []string{":::", "a", "b", "c"}},
	{name: "X-j4", flags: []string{"-X", "-j4"}, cmd: []string{"echo", "p{}q"}, srcs: []string{":::", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}},
	{name: "m", flags: []string{"-m"}, cmd: []string{"echo", "pre-{}-post"}, srcs: []string{":::", "a", "b", "c"}},
	{name: "m-j2", flags: []string{"-m", "-j2"}, cmd: []string{"echo", "{}-{}"}, srcs: []string{":::", "a", "b", "c"}},
	{name: "X-positional", flags: []string{"-X"}, cmd: []string{"echo", "{}", "{1}", "{2}", "{#}"}, srcs: []string{":::", "a", "b", "c"}},
	{name: "X-two-sources", flags: []string{"-X"}, cmd: []string{"echo", "pre-{}-post"}, srcs: []string{":::", "a", "b", ":::", "x", "y"}},
	{name: "X-modifiers", flags: []string{"-X"}, cmd: []string{"echo", "{.}", "{/}"}, srcs: []string{":::", "a/b.c", "d/e.f"}},
	{name: "xargs-s", flags: []string{"--xargs", "-s", "20"}, cmd: []string{"echo"}, srcs: []string{":::", "aaaa", "bbbb", "cccc", "dddd", "eeee"}},
	{name: "X-s", flags: []string{"-X", "-s", "10"}, cmd: []string{"echo"}, srcs: []string{":::", "a", "b", "c"}},
	{name: "m-n2", flags: []string{"-m", "-n2", "-j1"}, cmd: []string{"echo"}, srcs: []string{":::", "a", "b", "c"}},
	{name: "m-n2-context", flags: []string{"-m", "-n2", "-j1"}, cmd: []string{"echo", "x{}y"}, srcs: []string{":::", "a", "b", "c"}},
	{name: "m-N2-context", flags: []string{"-m", "-N2", "-j1"}, cmd: []string{"echo", "x{}y"}, srcs: []string{":::", "a", "b", "c"}},
	{name: "xargs-N2-context", flags: []string{"--xargs", "-N2", "-j1"}, cmd: []string{"echo", "x{}y"}, srcs: []string{":::", "a", "b", "c"}},
	{name: "xargs-L1-context", flags: []string{"--xargs", "-L", "1", "-j1"}, cmd: []string{"echo", "x{}y"}, stdin: "a b\nc\n"},
	{name: "L2", flags: []string{"-L", "2"}, cmd: []string{"echo"}, stdin: "a b\nc\nd e\nf\n"},
	{name: "L1-continued", flags: []string{"-L", "1"}, cmd: []string{"echo"}, stdin: "a b \nc\nd e\nf\n"},
	// Any of Perl's \s at a line's end continues it: a CRLF line too.
	{name: "L1-continued-cr", flags: []string{"-L", "1"}, cmd: []string{"echo"}, stdin: "f \r\ng\nh\f\ni\nj\v\nk\nl\n"},
	{name: "colsep", flags: []string{"--colsep", ","}, cmd: []string{"echo", "{2}", "{1}", "{3}x", "{4}y"}, srcs: []string{":::", "a,b,", "c,d"}},
	{name: "colsep-regexp", flags: []string{"--colsep", "[,;]+"}, cmd: []string{"echo", "{3}", "{1}"}, srcs: []string{":::", "a,;b;c"}},
	{name: "colsep-append", flags: []string{"--colsep", ","}, cmd: []string{"echo"}, srcs: []string{":::", "a,b,,"}},
	{name: "colsep-sources", flags: []string{"--colsep", ","}, cmd: []string{"echo", "{1}", "{2}", "{3}"}, srcs: []string{":::", "a,b", ":::", "c,d"}},
	{name: "trim-colsep", flags: []string{"--trim", "lr", "--colsep", ","}, cmd: []string{"echo", "{2}x", "{1}"}, srcs: []string{":::", " a , b "}},
	{name: "trim-l", flags: []string{"--trim", "l"}, cmd: []string{"echo", "[{}]"}, srcs: []string{":::", " \ta\t "}},
	{name: "trim-r", flags: []string{"--trim", "r"}, cmd: []string{"echo", "[{}]"}, srcs: []string{":::", " \ta\t "}},
	{name: "header", flags: []string{"--header", ":"}, cmd: []string{"echo", "{foo}", "{bar}", "{foo.}"}, srcs: []string{":::", "foo", "1", "2.x", ":::", "bar", "3", "4"}},
	{name: "header-colsep", flags: []string{"--header", ":", "--colsep", ","}, cmd: []string{"echo", "{b}", "{a}"}, stdin: "a,b\n1,2\n3,4\n"},
	{name: "header-linked", flags: []string{"--header", ":"}, cmd: []string{"echo", "{a}", "{b}"}, srcs: []string{":::", "a", "1", "2", ":::+", "b", "3", "4"}},
	{name: "I", flags: []string{"-I", "XX"}, cmd: []string{"echo", "XX", "{}", "{.}", "{1}", "XX.", "aXXb"}, srcs: []string{":::", "a.b"}},
	{name: "custom-strings", flags: []string{"--er", "EE", "--bnr", "BB", "--dnr", "DD", "--bner", "BE", "--seqreplace", "SQ", "--slotreplace", "SL"},
		cmd: []string{"echo", "EE", "BB", "DD", "BE", "SQ", "SL", "{}"}, srcs: []string{":::", "/x/y.z"}},
	{name: "E-stdin", flags: []string{"-E", "STOP"}, cmd: []string{"echo"}, stdin: "a\nSTOP\nb\n"},
	{name: "E-sources", flags: []string{"-E", "b"}, cmd: []string{"echo"}, srcs: []string{":::", "a", "b", ":::", "x", "b", "y"}},
	{name: "d-comma", flags: []string{"-d", ","}, cmd: []string{"echo", "[{}]"}, stdin: "a,,b"},
	{name: "d-escape", flags: []string{"-d", `\t`}, cmd: []string{"echo", "[{}]"}, stdin: "a\tb\t"},
	{name: "d-multi", flags: []string{"-d", "xy"}, cmd: []string{"echo", "[{}]"}, stdin: "axybxyxcx"},
	{name: "d-backslashes", flags: []string{"-d", `\\`}, cmd: []string{"echo", "[{}]"}, stdin: `a\\b\c\\`},
	{name: "d-no-hex", flags: []string{"-d", `\x41`}, cmd: []string{"echo", "[{}]"}, stdin: `aAb\x41c`},
	{name: "d-octal-passes", flags: []string{"-d", `\0411\12`}, cmd: []string{"echo", "[{}]"}, stdin: "a!1\x012b!1c"},
	{name: "null", flags: []string{"-0"}, cmd: []string{"echo", "[{}]"}, stdin: "a b\x00c\x00"},
	{name: "nul-in-line", cmd: []string{"echo", "[{}]"}, stdin: "a\x00b\nc\n"},
	{name: "empty-lines", cmd: []string{"echo", "x{}y"}, stdin: "a\n\nb\n"},
	// A source with no value is one empty value beside others that have.
	{name: "empty-later-source", cmd: []string{"echo", "[{1}]", "[{2}]"}, srcs: []string{":::", "a", "b", ":::"}},
	{name: "empty-first-file", cmd: []string{"echo", "[{1}]", "[{2}]", "[{3}]"}, srcs: []string{"::::", "empty", ":::", "a", "b", ":::", "c", "d"}, files: map[string]string{"empty": ""}},
	{name: "empty-middle-file", cmd: []string{"echo", "[{1}]", "[{2}]", "[{3}]"}, srcs: []string{":::", "a", "b", "::::", "empty", ":::", "c"}, files: map[string]string{"empty": ""}},
	{name: "empty-linked", cmd: []string{"echo", "[{1}]", "[{2}]"}, srcs: []string{":::", "a", "b", ":::+"}},
	{name: "empty-all", cmd: []string{"echo", "x"}, srcs: []string{"::::", "empty", ":::"}, files: map[string]string{"empty": ""}},
	{name: "empty-header-only", flags: []string{"--header", ":"}, cmd: []string{"echo", "[{h}]", "[{g}]"}, srcs: []string{":::", "h", ":::", "g", "a", "b"}},
	{name: "empty-E", flags: []string{"-E", "b"}, cmd: []string{"echo", "[{1}]", "[{2}]"}, srcs: []string{":::", "a", ":::", "b", "c"}},
	{name: "empty-n2", flags: []string{"-n2"}, cmd: []string{"echo"}, srcs: []string{":::", "a", "b", ":::"}},
}

// gnuArgv is the case as a GNU parallel command line printing each job's
// command instead of running it.
func (c gnuCase) gnuArgv() []string {
	a := []string{"--will-cite", "-k", "--dry-run"}
	if !slices.ContainsFunc(c.flags, func(f string) bool { return strings.HasPrefix(f, "-j") }) {
		a = append(a, "-j1")
	}
	a = append(a, c.flags...)
	a = append(a, c.cmd...)
	return append(a, c.srcs...)
}

// runGNU returns GNU parallel's jobs for c, each as its argv (read back
// from the --dry-run line by sh), one job per line, words in <>.
func runGNU(t *testing.T, c gnuCase, dir string) string {
	cmd := exec.Command("parallel", c.gnuArgv()...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(c.stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: parallel: %v: %s", c.name, err, stderr.String())
	}
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		script := "set -f; set -- " + sc.Text() + `; for w in "$@"; do printf '<%s>' "$w"; done`
		words, err := exec.Command("sh", "-c", script).Output()
		if err != nil {
			t.Fatalf("%s: sh on %q: %v", c.name, sc.Text(), err)
		}
		b.Write(words)
		b.WriteByte('\n')
	}
	return b.String()
}

// runRation builds c's jobs with this package and package template, as the
// CLI is to wire them, in the same format as runGNU.
func runRation(t *testing.T, c gnuCase, dir string) string {
	var (
		split      gnuinput.SplitOptions
		opts       gnuinput.Options
		bopts      gnuinput.BatchOptions
		topts      template.Options
		x, m, xarg bool
		zeroArgs   bool
		lines      bool
		jobs       = 1
	)
	f := c.flags
	next := func(i *int) string { *i++; return f[*i] }
	for i := 0; i < len(f); i++ {
		var err error
		switch a := f[i]; {
		case a == "-X":
			x = true
		case a == "-m":
			m = true
		case a == "--xargs":
			xarg = true
		case a == "--link":
			opts.Link = true
		case a == "-0":
			split.Delim = "\x00"
		case a == "-n" || a == "-N" || a == "-L" || strings.HasPrefix(a, "-n") || strings.HasPrefix(a, "-N"):
			v := strings.TrimLeft(a, "-nNL")
			if v == "" {
				v = next(&i)
			}
			bopts.MaxArgs, _ = strconv.Atoi(v)
			switch a[1] {
			case 'N':
				// -N makes {} repeat per argument, as -X does; -L
				// too, but not with -m or --xargs.
				topts.Context = true
			case 'L':
				topts.Context = !m && !xarg
			}
			lines = a[1] == 'L'
			if bopts.MaxArgs == 0 {
				bopts.MaxArgs, zeroArgs = 1, true
			}
		case strings.HasPrefix(a, "-j"):
			jobs, _ = strconv.Atoi(a[2:])
		case a == "-s":
			bopts.MaxChars, _ = strconv.Atoi(next(&i))
		case a == "--colsep":
			opts.ColSep, err = regexp.Compile(next(&i))
		case a == "--header":
			next(&i)
			opts.Header = true
		case a == "--trim":
			opts.Trim, err = gnuinput.ParseTrim(next(&i))
		case a == "-E":
			split.EOF = next(&i)
		case a == "-d":
			split.Delim, err = gnuinput.ParseDelimiter(next(&i))
		case a == "-I":
			topts.Strings.Input = next(&i)
		case a == "--er":
			topts.Strings.NoExt = next(&i)
		case a == "--bnr":
			topts.Strings.Base = next(&i)
		case a == "--dnr":
			topts.Strings.Dir = next(&i)
		case a == "--bner":
			topts.Strings.BaseNoExt = next(&i)
		case a == "--seqreplace":
			topts.Strings.Seq = next(&i)
		case a == "--slotreplace":
			topts.Strings.Slot = next(&i)
		default:
			t.Fatalf("%s: flag %q not in the test's CLI model", c.name, a)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var srcs []gnuinput.Source
	for i := 0; i < len(c.srcs); i++ {
		sep := c.srcs[i]
		var vals []string
		for i+1 < len(c.srcs) && !strings.HasPrefix(c.srcs[i+1], ":::") {
			i++
			vals = append(vals, c.srcs[i])
		}
		linked := strings.HasSuffix(sep, "+")
		if strings.HasPrefix(sep, "::::") {
			for _, name := range vals {
				path := filepath.Join(dir, name)
				srcs = append(srcs, gnuinput.Source{Name: sep + " " + name, Linked: linked,
					Values: func(yield func(string, error) bool) {
						fh, err := os.Open(path)
						if err != nil {
							yield("", err)
							return
						}
						defer fh.Close()
						for v, err := range gnuinput.Split(fh, split) {
							if !yield(v, err) {
								return
							}
						}
					}})
				linked = false
			}
			continue
		}
		srcs = append(srcs, gnuinput.Source{Name: sep, Linked: linked, Values: gnuinput.Until(input.Args(vals), split.EOF)})
	}
	if len(srcs) == 0 {
		s := gnuinput.Split(strings.NewReader(c.stdin), split)
		if lines {
			s = gnuinput.JoinContinued(s)
		}
		srcs = []gnuinput.Source{{Name: "stdin", Values: s}}
	}
	in, err := gnuinput.Open(srcs, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	topts.Names = in.Names()
	if x {
		topts.Context = true
	}
	tmpl, err := template.ParseOptions(c.cmd, topts)
	if err != nil {
		t.Fatal(err)
	}
	if x || m || xarg {
		if bopts.MaxChars == 0 {
			bopts.MaxChars = gnuinput.DefaultMaxChars()
		}
		if x || m {
			bopts.Spread = jobs
		}
	}
	if bopts.MaxChars > 0 {
		bopts.Measure = tmpl.Measurer()
	}
	var b strings.Builder
	for batch, err := range gnuinput.Batches(in.All(), bopts) {
		if err != nil {
			t.Fatal(err)
		}
		fields := batch.Fields()
		if zeroArgs {
			fields = nil
		}
		for _, w := range tmpl.ExpandFields(fields, batch.Seq, 1) {
			fmt.Fprintf(&b, "<%s>", w)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

const golden = "testdata/gnu.golden"

// readGolden reads the committed expectations: "== name" lines, each
// followed by that case's jobs.
func readGolden(t *testing.T) map[string]string {
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, chunk := range strings.Split(string(data), "== ")[1:] {
		name, body, _ := strings.Cut(chunk, "\n")
		out[name] = body
	}
	return out
}

// TestGNUParallel compares the jobs this package and package template make
// with GNU parallel 20221122's, from the committed table, and with the
// installed GNU parallel itself when there is one.
func TestGNUParallel(t *testing.T) {
	_, err := exec.LookPath("parallel")
	haveGNU := err == nil
	if *update {
		if !haveGNU {
			t.Fatal("-update needs GNU parallel")
		}
		var b strings.Builder
		for _, c := range gnuCases {
			dir := writeFiles(t, c)
			fmt.Fprintf(&b, "== %s\n%s", c.name, runGNU(t, c, dir))
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := readGolden(t)
	for _, c := range gnuCases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFiles(t, c)
			w, ok := want[c.name]
			if !ok {
				t.Fatalf("no expectation in %s; run go test -run TestGNUParallel -update", golden)
			}
			if got := runRation(t, c, dir); got != w {
				t.Errorf("parallel %s\n got:\n%s\nwant (GNU parallel):\n%s", strings.Join(c.gnuArgv(), " "), got, w)
			}
			if !haveGNU {
				return
			}
			if g := runGNU(t, c, dir); g != w {
				t.Errorf("installed GNU parallel differs from %s:\n%s\nwant:\n%s", golden, g, w)
			}
		})
	}
	if !haveGNU {
		t.Log("GNU parallel not installed: compared with the committed table only")
	}
}

func writeFiles(t *testing.T, c gnuCase) string {
	dir := t.TempDir()
	for name, body := range c.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
