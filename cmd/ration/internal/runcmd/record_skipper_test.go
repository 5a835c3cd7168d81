package runcmd

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestRecordSkipper: --skip-first-line's reader drops the bytes up to and
// including the first delimiter, however the reads cut it (one byte at a
// time), a delimiter of several bytes, and a first record longer than
// bufio's buffer; a reader without the delimiter reads as empty.
func TestRecordSkipper(t *testing.T) {
	long := strings.Repeat("x", 10000)
	for _, c := range []struct{ in, delim, want string }{
		{"h\na\nb\n", "\n", "a\nb\n"},
		{"h_a__b__c", "__", "b__c"},
		{"h__a__b", "__", "a__b"},
		{long + "\nrest\n", "\n", "rest\n"},
		{long + "_" + long + "__rest", "__", "rest"},
		{"no delimiter", "\n", ""},
		{"", "\n", ""},
		{"\n", "\n", ""},
	} {
		in := inputPlan{skipFirst: true, delim: c.delim}
		got, err := io.ReadAll(in.firstReader(iotest.OneByteReader(strings.NewReader(c.in))))
		if err != nil || string(got) != c.want {
			t.Errorf("%.20q by %q: got %.20q, %v; want %.20q", c.in, c.delim, got, err, c.want)
		}
	}
}
