package gnuinput

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestBlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		o    BlockOptions
		want []string
	}{
		{"empty", "", BlockOptions{RecEnd: "\n"}, nil},
		{"one block", "a\nb\n", BlockOptions{RecEnd: "\n"}, []string{"a\nb\n"}},
		{"cut after the last whole line", "ab\ncd\nef\n", BlockOptions{Size: 4, RecEnd: "\n"}, []string{"ab\n", "cd\n", "ef\n"}},
		{"no records: exactly size", "abcdefg", BlockOptions{Size: 3}, []string{"abc", "def", "g"}},
		// As GNU parallel: seq 100000 | parallel --pipe --block 100k wc
		// gives blocks of 99996 bytes, the leftover counting in the next.
		{"at most size", "ab\ncd\nef\ngh\nij\n", BlockOptions{Size: 7, RecEnd: "\n"}, []string{"ab\ncd\n", "ef\ngh\n", "ij\n"}},
		{"a record longer than the size grows the block", "abcdefgh\nij\n", BlockOptions{Size: 3, RecEnd: "\n"}, []string{"abcdefgh\n", "ij\n"}},
		{"no final newline", "a\nb", BlockOptions{Size: 2, RecEnd: "\n"}, []string{"a\n", "b"}},
		{"-N records", "1\n2\n3\n4\n5\n", BlockOptions{Records: 2, RecEnd: "\n"}, []string{"1\n2\n", "3\n4\n", "5\n"}},
		{"--recend", "/foo, bar/, /baz, qux/,\n", BlockOptions{Records: 1, RecEnd: ", "}, []string{"/foo, ", "bar/, ", "/baz, ", "qux/,\n"}},
		{"--recstart", "/foo, bar/, /baz, qux/, \n", BlockOptions{Records: 1, RecStart: "/"}, []string{"/foo, bar", "/, ", "/baz, qux", "/, \n"}},
		{"both", "/foo, bar/, /baz, qux/, \n", BlockOptions{Records: 1, RecEnd: ", ", RecStart: "/"}, []string{"/foo, bar/, ", "/baz, qux/, \n"}},
		{"a RecStart cut by a read is seen whole", strings.Repeat("x", 4095) + "\n>a\n>b\n", BlockOptions{Records: 1, RecStart: ">"}, []string{strings.Repeat("x", 4095) + "\n", ">a\n", ">b\n"}},
		// The rows below are GNU parallel 20221122's blocks for the same
		// input and options (parallel -k --pipe ... 'cat').
		{"--regexp -N1", "foo,bar,_baz,__qux,\n", BlockOptions{Records: 1, RecEnd: ",_+", Regexp: true}, []string{"foo,bar,_", "baz,__", "qux,\n"}},
		{"--regexp blocks: a match at the end of the buffer cuts", "a1b22c333d", BlockOptions{Size: 4, RecEnd: "[0-9]+", Regexp: true}, []string{"a1b2", "2c33", "3d"}},
		{"--regexp -N2: what comes before the first RecStart is a block", "xx>a>b>c>d", BlockOptions{Records: 2, RecStart: ">", Regexp: true}, []string{"xx", ">a>b", ">c>d"}},
		{"not --regexp -N2: it is a record", "xx>a>b>c>d", BlockOptions{Records: 2, RecStart: ">"}, []string{"xx>a", ">b>c", ">d"}},
		{"--regexp with a RecStart of several lines", "@r1/1\nAC\n@r2/1\nGT\n", BlockOptions{Records: 1, RecEnd: "\n", RecStart: "@.*(/1| 1:.*)\n[A-Za-z\n\\.~]", Regexp: true}, []string{"@r1/1\nAC\n", "@r2/1\nGT\n"}},
		{"--regexp empty RecEnd and RecStart: any character", "abc", BlockOptions{Records: 1, Regexp: true}, []string{"a", "b", "c"}},
		{"-L3", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", BlockOptions{Size: 12, Lines: 3, RecEnd: "\n"}, []string{"1\n2\n3\n4\n5\n6\n", "7\n8\n9\n", "10\n"}},
		{"-L2 -N2", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", BlockOptions{Records: 2, Lines: 2, RecEnd: "\n"}, []string{"1\n2\n3\n4\n", "5\n6\n7\n8\n", "9\n10\n"}},
		{"-L: records of lines, whatever RecEnd says", "a,b\nc,d\n", BlockOptions{Size: 5, Lines: 1, RecEnd: ","}, []string{"a,b\n", "c,d\n"}},
		{"--rrs", "a\nb\nc\n", BlockOptions{Records: 2, RecEnd: "\n", RemoveRecSep: true}, []string{"ab", "c"}},
		{"--rrs --recend ,", "a,b,c,\n", BlockOptions{Records: 1, RecEnd: ",", RemoveRecSep: true}, []string{"a", "b", "c", "\n"}},
		{"--rrs --regexp", "foo,bar,_baz,__qux,\n", BlockOptions{Records: 1, RecEnd: ",_+", Regexp: true, RemoveRecSep: true}, []string{"foo,bar", "baz", "qux,\n"}},
		{"-N: a separator at the start of the stream ends no record", "SEPa\nSEPb\n", BlockOptions{Records: 1, RecEnd: "SEP", RemoveRecSep: true}, []string{"a\n", "b\n"}},
		{"--rrs --recstart", ">a\n>b\n>c\n", BlockOptions{Size: 5, RecStart: ">", RemoveRecSep: true}, []string{"a\n", "b\n", "c\n"}},
		{"--rrs: a RecEnd before a final newline goes", "a,\n", BlockOptions{Records: 1, RecEnd: ",\n|,", Regexp: true, RemoveRecSep: true}, []string{"a"}},
		{"--header 2", "h1\nh2\na\nb\nc\n", BlockOptions{Size: 4, RecEnd: "\n", Header: "(.*\n)(.*\n)"}, []string{"h1\nh2\na\nb\n", "h1\nh2\nc\n"}},
		{"--header longer than a block", "HHHHAAABBBCCC", BlockOptions{Size: 3, Header: ".{4}"}, []string{"HHHHAAA", "HHHHBBB", "HHHHCCC"}},
		{"--header regexp -N3", "%h1\n%h2\n1\n2\n3\n4\n", BlockOptions{Records: 3, RecEnd: "\n", Header: "(%.*\n)*"}, []string{"%h1\n%h2\n1\n2\n3\n", "%h1\n%h2\n4\n"}},
		{"--header : --rrs: the header stays whole", "h1\nh2\na\nb\nc\n", BlockOptions{Records: 2, RecEnd: "\n", RemoveRecSep: true, Header: "(.*\n)"}, []string{"h1\nh2a", "h1\nbc"}},
		{"--header that never matches: none", "abc\n", BlockOptions{RecEnd: "\n", Header: "x"}, []string{"abc\n"}},
		{"--header only", "h\n", BlockOptions{RecEnd: "\n", Header: "(.*\n)"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for b, err := range Blocks(iotest.OneByteReader(strings.NewReader(tc.in)), tc.o) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, b)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if strings.Join(got, "") != tc.in && !tc.o.RemoveRecSep && tc.o.Header == "" {
				t.Errorf("blocks do not add up to the input")
			}
		})
	}
}

func TestBlocksReadError(t *testing.T) {
	boom := errors.New("boom")
	var got []string
	var gotErr error
	for b, err := range Blocks(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)), BlockOptions{Size: 100, RecEnd: "\n"}) {
		if err != nil {
			gotErr = err
			break
		}
		got = append(got, b)
	}
	if !slices.Equal(got, []string{"a\nb"}) || !errors.Is(gotErr, boom) {
		t.Errorf("got %q, %v", got, gotErr)
	}
}

func TestBlocksBadRegexp(t *testing.T) {
	for _, o := range []BlockOptions{{Regexp: true, RecEnd: "("}, {Regexp: true, RecStart: "(?=x)"}, {Header: "["}} {
		if o.Check() == nil {
			t.Errorf("%+v: no error", o)
		}
		for _, err := range Blocks(strings.NewReader("a\n"), o) {
			if err == nil {
				t.Errorf("%+v: a block, no error", o)
			}
		}
	}
	if err := (BlockOptions{RecEnd: "("}).Check(); err != nil {
		t.Errorf("a plain RecEnd is no regexp: %v", err)
	}
}

// TestBlocksRegexpHighBytes: GNU parallel's perl matches --regexp against
// bytes, Go's against UTF-8 characters, so \xff (or a byte 0xff itself)
// never matched a byte 0xff and the whole input went to one job
// silently (GNU: 407 jobs for 300 KB of random bytes with -N3). Such
// patterns are refused; UTF-8 characters and ASCII escapes are not.
func TestBlocksRegexpHighBytes(t *testing.T) {
	for _, re := range []string{`\xff`, `\x80`, `a\x{e9}`, `[\xf0-\xff]`, `\377`, `\200`} {
		for _, o := range []BlockOptions{{Regexp: true, RecEnd: re}, {Regexp: true, RecStart: re}} {
			err := o.Check()
			if err == nil || !strings.Contains(err.Error(), "bytes") {
				t.Errorf("%q: got %v, want an error about bytes", re, err)
			}
		}
	}
	if err := (BlockOptions{Regexp: true, RecEnd: "\xff"}).Check(); err == nil {
		t.Errorf("a raw byte 0xff: no error")
	}
	for _, re := range []string{`\x7f`, `\x41\n`, "é", `\\xff`, `\177`, `\0`, `[\x00-\x10]`} {
		if err := (BlockOptions{Regexp: true, RecEnd: re}).Check(); err != nil {
			t.Errorf("%q: %v", re, err)
		}
	}
}

// TestBlocksMemory: a header that never matches is looked for in 64
// blocks at most, and cutting many blocks holds about one.
func TestBlocksMemory(t *testing.T) {
	n := 0
	in := io.LimitReader(neverEnding('x'), 1<<20)
	for b, err := range Blocks(in, BlockOptions{Size: 1024, Header: "y"}) {
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 64*1024+1024 {
			t.Fatalf("block of %d bytes", len(b))
		}
		n++
	}
	if n == 0 {
		t.Fatal("no blocks")
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestParseBlockSize(t *testing.T) {
	for in, want := range map[string]int{"1M": 1 << 20, "2m": 2000000, "3": 3, "10k": 10000, "1K": 1024, "1.5K": 1536} {
		if got, err := ParseBlockSize(in); err != nil || got != want {
			t.Errorf("%q: got %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "x", "1X"} {
		if _, err := ParseBlockSize(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
