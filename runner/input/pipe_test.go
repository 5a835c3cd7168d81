package input

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
			if strings.Join(got, "") != tc.in {
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
