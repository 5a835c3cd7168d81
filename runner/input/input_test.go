package input

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func collect(t *testing.T, s Seq) []string {
	t.Helper()
	var out []string
	for v, err := range s {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestReader(t *testing.T) {
	cases := []struct {
		in   string
		sep  byte
		want []string
	}{
		{"a\nb\n", '\n', []string{"a", "b"}},
		{"a\n\nb", '\n', []string{"a", "", "b"}},
		{"", '\n', nil},
		{"a b\x00c\nd\x00", 0, []string{"a b", "c\nd"}},
		{strings.Repeat("x", 200000) + "\ny", '\n', []string{strings.Repeat("x", 200000), "y"}},
	}
	for _, c := range cases {
		got := collect(t, Reader(iotest.OneByteReader(strings.NewReader(c.in)), c.sep))
		if !slices.Equal(got, c.want) {
			t.Errorf("%.20q: got %d records %.40q, want %.40q", c.in, len(got), got, c.want)
		}
	}
	// A read error is yielded last, after the records before it.
	r := iotest.TimeoutReader(strings.NewReader("a\nb\nc"))
	var got []string
	var last error
	for v, err := range Reader(r, '\n') {
		if err != nil {
			last = err
			break
		}
		got = append(got, v)
	}
	if !errors.Is(last, iotest.ErrTimeout) {
		t.Errorf("error %v, want ErrTimeout (records %q)", last, got)
	}
}

func TestFileMissing(t *testing.T) {
	for _, err := range File(filepath.Join(t.TempDir(), "nope"), '\n') {
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("got %v", err)
		}
	}
}
