package gnuinput

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func seqText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// fastq is 300 FASTQ records of 72 bytes (21490 bytes in all).
func fastq() string {
	rng := rand.New(rand.NewPCG(1, 1))
	var b strings.Builder
	for i := range 300 {
		var s [30]byte
		for j := range s {
			s[j] = "ACGT"[rng.IntN(4)]
		}
		fmt.Fprintf(&b, "@r%d/1\n%s\n+\n%s\n", i, s, strings.Repeat("I", 30))
	}
	return b.String()
}

func TestSplitFile(t *testing.T) {
	fq := fastq()
	const fqStart = `@.*(/1| 1:.*)\n[A-Za-z\n\.~]`
	// The lengths are GNU parallel 20221122's parts of the same file
	// (parallel --pipepart -a FILE ... wc -c).
	for _, tc := range []struct {
		name string
		in   string
		o    PartOptions
		want []string // "HEADER|PART", or the length of each part
	}{
		{"--block 100k", seqText(30000), PartOptions{Size: 100000, RecEnd: "\n"}, []string{"100002", "68892"}},
		{"--block -2 -j3", seqText(30000), PartOptions{Size: 1 + 168894/3/2, RecEnd: "\n"}, []string{"28153", "28151", "28152", "28152", "28152", "28134"}},
		{"one part", "a\nb\n", PartOptions{Size: 1 << 20, RecEnd: "\n"}, []string{"|a\nb\n"}},
		{"empty", "", PartOptions{Size: 10, RecEnd: "\n"}, nil},
		{"--recend ''", "abcdefg", PartOptions{Size: 3}, []string{"|abc", "|def", "|g"}},
		{"--recstart", ">a\n>bb\n>c\n", PartOptions{Size: 2, RecStart: ">"}, []string{"|>a\n", "|>bb\n", "|>c\n"}},
		{"no boundary after the first", "a\nbcdefgh", PartOptions{Size: 1, RecEnd: "\n"}, []string{"|a\n", "|bcdefgh"}},
		{"--header 2", "h1\nh2\n" + seqText(10), PartOptions{Size: 5, RecEnd: "\n", Header: `(.*\n)(.*\n)`},
			[]string{"h1\nh2\n|1\n2\n3\n", "h1\nh2\n|4\n5\n6\n", "h1\nh2\n|7\n8\n9\n", "h1\nh2\n|10\n"}},
		// GNU parallel takes the last boundary of what it read.
		{"--regexp --block -1 -j2", fq, PartOptions{Size: 1 + int64(len(fq))/2, RecEnd: `\n`, RecStart: fqStart, Regexp: true}, []string{"21418", "72"}},
		{"--regexp --block 1k", fq, PartOptions{Size: 1024, RecEnd: `\n`, RecStart: fqStart, Regexp: true}, []string{"21418", "72"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := strings.NewReader(tc.in)
			var got []string
			end := int64(-1)
			for p, err := range SplitFile(r, int64(len(tc.in)), tc.o) {
				if err != nil {
					t.Fatal(err)
				}
				if end >= 0 && p.Start != end {
					t.Errorf("part %+v does not start where the one before ended (%d)", p, end)
				}
				end = p.End
				b, err := io.ReadAll(p.Reader(r))
				if err != nil {
					t.Fatal(err)
				}
				if slices.ContainsFunc(tc.want, func(s string) bool { return strings.Contains(s, "|") }) {
					got = append(got, string(b[:p.Header])+"|"+string(b[p.Header:]))
				} else {
					got = append(got, fmt.Sprint(len(b)))
				}
			}
			if len(tc.in) > 0 && end != int64(len(tc.in)) {
				t.Errorf("the parts end at %d, not at the end (%d)", end, len(tc.in))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSplitFileErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		r    io.ReaderAt
		o    PartOptions
		want error
	}{
		{"read error", errReaderAt{boom}, PartOptions{Size: 1, RecEnd: "\n"}, boom},
	} {
		var got error
		for _, err := range SplitFile(tc.r, 100, tc.o) {
			got = err
		}
		if !errors.Is(got, tc.want) {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
	for _, o := range []PartOptions{{Size: 0}, {Size: 1, Regexp: true, RecEnd: "("}, {Size: 1, Header: "("}} {
		var got error
		for _, err := range SplitFile(strings.NewReader("a\n"), 2, o) {
			got = err
		}
		if got == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

type errReaderAt struct{ err error }

func (e errReaderAt) ReadAt([]byte, int64) (int, error) { return 0, e.err }

// lineFile is a file of size bytes of 9-byte lines, made as it is read;
// read counts the bytes read.
type lineFile struct{ read int64 }

func (f *lineFile) ReadAt(p []byte, off int64) (int, error) {
	for i := range p {
		p[i] = 'x'
		if (off+int64(i))%9 == 8 {
			p[i] = '\n'
		}
	}
	f.read += int64(len(p))
	return len(p), nil
}

// TestSplitFileReadsAroundCuts: cutting a 1 GiB file into 16 MiB parts
// reads a few bytes at each cut, not the file.
func TestSplitFileReadsAroundCuts(t *testing.T) {
	f := &lineFile{}
	const size = 1 << 30
	n := 0
	for p, err := range SplitFile(f, size, PartOptions{Size: 16 << 20, RecEnd: "\n"}) {
		if err != nil {
			t.Fatal(err)
		}
		if p.Start%9 != 0 {
			t.Fatalf("part %+v does not start at a line", p)
		}
		n++
	}
	if n != 64 {
		t.Errorf("%d parts, want 64", n)
	}
	if f.read > int64(n)*partRead {
		t.Errorf("read %d bytes for %d parts", f.read, n)
	}
}
