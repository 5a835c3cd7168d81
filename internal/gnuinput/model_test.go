package gnuinput

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ration-run/ration/runner/input"
)

func TestParseDelimiter(t *testing.T) {
	// The expected values are what GNU parallel 20221122's unquote_printf
	// makes of each -d argument (checked by splitting input with it): only
	// \t, \n, \r, \NNN and \N are decoded, in that order of passes.
	cases := []struct{ in, want string }{
		{",", ","}, {`\n`, "\n"}, {`\t`, "\t"}, {`\r`, "\r"}, {`\0`, "\x00"}, {`\012`, "\n"},
		{`\101`, "A"}, {`\12`, "\x012"}, {`\8`, "8"}, {`\0411`, "!1"}, {`\1345`, "\x05"},
		{"xy", "xy"}, {`\\`, `\\`}, {`\\n`, "\\\n"}, {`\q`, `\q`}, {`a\`, `a\`},
		{`\x41b`, `\x41b`}, {`\a`, `\a`}, {`\x`, `\x`}, {`\e`, `\e`},
	}
	for _, c := range cases {
		if got, err := ParseDelimiter(c.in); err != nil || got != c.want {
			t.Errorf("ParseDelimiter(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", `\777`, `\400`} {
		if _, err := ParseDelimiter(bad); !errors.Is(err, ErrBadOption) {
			t.Errorf("ParseDelimiter(%q): %v, want ErrBadOption", bad, err)
		}
	}
	if _, err := ParseTrim("x"); !errors.Is(err, ErrBadOption) {
		t.Errorf("ParseTrim(x): %v", err)
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		in   string
		opts SplitOptions
		want []string
	}{
		{"axybx", SplitOptions{Delim: "xy"}, []string{"a", "bx"}},
		{"axyxybxy", SplitOptions{Delim: "xy"}, []string{"a", "", "b"}},
		{"xxy", SplitOptions{Delim: "xy"}, []string{"x"}},
		{"a\nEOF\nb\n", SplitOptions{EOF: "EOF"}, []string{"a"}},
		{"a\x00b\nc", SplitOptions{}, []string{`a\0b`, "c"}},
		{"a\x00b\nc", SplitOptions{Delim: "\x00"}, []string{"a", "b\nc"}},
		{strings.Repeat("z", 100000) + "xy", SplitOptions{Delim: "xy"}, []string{strings.Repeat("z", 100000)}},
	}
	for _, c := range cases {
		got := collect(t, Split(iotest.OneByteReader(strings.NewReader(c.in)), c.opts))
		if !slices.Equal(got, c.want) {
			t.Errorf("%.20q %+v: got %.40q, want %.40q", c.in, c.opts, got, c.want)
		}
	}
	// The NUL callback runs once however many records hold one.
	n := 0
	collect(t, Split(strings.NewReader("\x00\n\x00\n"), SplitOptions{NUL: func() { n++ }}))
	if n != 1 {
		t.Errorf("NUL called %d times, want 1", n)
	}
	if got := collect(t, JoinContinued(input.Args([]string{"a ", "b\t", "c", "d", "e "}))); !slices.Equal(got, []string{"a b\tc", "d", "e "}) {
		t.Errorf("JoinContinued: %q", got)
	}
}

func args(t *testing.T, in *Inputs) []string {
	t.Helper()
	var out []string
	for a, err := range in.All() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join(a, "|"))
	}
	return out
}

func TestOpenErrors(t *testing.T) {
	boom := errors.New("boom")
	failing := func(yield func(string, error) bool) {
		if yield("a", nil) {
			yield("", boom)
		}
	}
	if _, err := Open([]Source{{Name: ":::", Values: input.Args([]string{"x"})}, {Name: "-a f", Values: failing}}, Options{}); !errors.Is(err, boom) || !strings.Contains(err.Error(), "-a f") {
		t.Errorf("later source error: %v", err)
	}
	if _, err := Open([]Source{{Name: ":::+", Linked: true, Values: input.Args(nil)}}, Options{}); !errors.Is(err, ErrBadOption) {
		t.Errorf("linked first: %v", err)
	}
	in, err := Open([]Source{{Name: "-a f", Values: failing}, {Name: ":::", Values: input.Args([]string{"1", "2"})}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var last error
	for a, err := range in.All() {
		if err != nil {
			last = err
			break
		}
		got = append(got, a.String())
	}
	if !errors.Is(last, boom) || !slices.Equal(got, []string{"a 1", "a 2"}) {
		t.Errorf("first source error: %q then %v", got, last)
	}
	// An empty later source is one empty value, as in GNU parallel
	// (TestGNUParallel's empty-* cases); All is single-use.
	in, _ = Open([]Source{{Values: input.Args([]string{"a"})}, {Values: input.Args(nil)}}, Options{})
	if got := args(t, in); !slices.Equal(got, []string{"a|"}) {
		t.Errorf("empty source: %q", got)
	}
	if got := args(t, in); got != nil {
		t.Errorf("second All: %q", got)
	}
	// With --link it makes no combination (GNU parallel fails on it).
	in, _ = Open([]Source{{Values: input.Args([]string{"a"})}, {Values: input.Args(nil)}}, Options{Link: true})
	if got := args(t, in); got != nil {
		t.Errorf("empty source with --link: %q", got)
	}
}

// TestOpenHeaderStdin checks that the header is read from a source that
// cannot be read twice, and that stopping early releases it.
func TestOpenHeaderStdin(t *testing.T) {
	in, err := Open([]Source{{Name: "stdin", Values: input.Reader(strings.NewReader("h\n1\n2\n3\n"), '\n')}}, Options{Header: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(in.Names(), []string{"h"}) {
		t.Errorf("names %q", in.Names())
	}
	for a := range in.All() {
		if a[0] != "1" {
			t.Errorf("first arg %q", a)
		}
		break
	}
	in.Close()
}

func TestBatches(t *testing.T) {
	mk := func(n int) ArgSeq {
		return func(yield func(Arg, error) bool) {
			for i := 1; i <= n; i++ {
				if !yield(Arg{fmt.Sprint(i)}, nil) {
					return
				}
			}
		}
	}
	sizes := func(opts BatchOptions, n int) (out []int) {
		for b, err := range Batches(mk(n), opts) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, len(b.Args))
		}
		return out
	}
	if got := sizes(BatchOptions{}, 3); !slices.Equal(got, []int{1, 1, 1}) {
		t.Errorf("default: %v", got)
	}
	if got := sizes(BatchOptions{MaxArgs: 4, Spread: 3}, 10); !slices.Equal(got, []int{4, 4, 1, 1}) {
		t.Errorf("spread of the last: %v", got)
	}
	// Shards: the batches of every shard together hold each input once.
	seen := map[string]int{}
	for shard := range 3 {
		keep := func(a Arg) bool {
			var h int
			for _, c := range a.Key() {
				h += int(c)
			}
			return h%3 == shard
		}
		for b, err := range Batches(mk(100), BatchOptions{MaxArgs: 7, Keep: keep}) {
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range b.Args {
				seen[a.Key()]++
			}
		}
	}
	if len(seen) != 100 {
		t.Errorf("shards covered %d of 100 inputs", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("input %s in %d shards", k, n)
		}
	}
}

type lenMeasure struct{ n int }

func (m *lenMeasure) Reset()                  { m.n = 4 }
func (m *lenMeasure) Add(fields []string) int { m.n += 1 + len(strings.Join(fields, " ")); return m.n }

func TestBatchesTooLong(t *testing.T) {
	var got []string
	var last error
	for b, err := range Batches(Args2([]string{"a", "bb", strings.Repeat("x", 60)}), BatchOptions{MaxChars: 10, Measure: &lenMeasure{n: 4}}) {
		if err != nil {
			last = err
			break
		}
		got = append(got, fmt.Sprint(b.Args))
	}
	if !errors.Is(last, ErrTooLong) || !strings.Contains(last.Error(), "at input 3: xxxx") || !slices.Equal(got, []string{"[a bb]"}) {
		t.Errorf("got %q then %v", got, last)
	}
	if _, err := First(Batches(Args2([]string{"a"}), BatchOptions{MaxChars: 5})); !errors.Is(err, ErrBadOption) {
		t.Errorf("MaxChars without Measure: %v", err)
	}
}

// Args2 is Args as an ArgSeq of one field each.
func Args2(vals []string) ArgSeq {
	return func(yield func(Arg, error) bool) {
		for _, v := range vals {
			if !yield(Arg{v}, nil) {
				return
			}
		}
	}
}

func First(s func(func(Batch, error) bool)) (Batch, error) {
	for b, err := range s {
		return b, err
	}
	return Batch{}, nil
}

func TestDefaultMaxChars(t *testing.T) {
	// GNU parallel 20221122 finds 130329 on Linux and keeps
	// (130329-3000)/2 (parallel --show-limits).
	if got := DefaultMaxChars(); got != 63664 {
		t.Errorf("DefaultMaxChars() = %d, want 63664", got)
	}
}
