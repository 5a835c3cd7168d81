package joblog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMaxLine: a Writer cuts the Command column so that the line fits
// Options.MaxLine, at a rune boundary, saying how much was cut, and keeps
// the other columns.
func TestMaxLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	w, err := Open(path, Options{MaxLine: 2048})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("é", 5000) // 10000 bytes, two per rune
	w.Write(Entry{Seq: 1, Exitval: 4, Signal: 0, Command: big})
	w.Write(Entry{Seq: 2, Command: "small"})
	w.Close()
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	if n := len(lines[1]); n > 2048 || n < 2000 {
		t.Errorf("line of %d bytes, want at most 2048 and close to it", n)
	}
	var got []Entry
	for e, err := range Entries(strings.NewReader(string(b))) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if len(got) != 2 || got[0].Seq != 1 || got[0].Exitval != 4 || got[1].Command != "small" {
		t.Fatalf("read back %+v", got)
	}
	c := got[0].Command
	if !utf8.ValidString(c) || !strings.HasPrefix(c, "éé") || !strings.HasSuffix(c, " bytes cut]") {
		t.Errorf("cut command ends %q", c[max(len(c)-40, 0):])
	}
}

// TestLineTooLong: a line longer than MaxReadLine (no Writer writes one) is
// a clear error, read past in bounded memory; Load refuses the log rather
// than run that line's job again.
func TestLineTooLong(t *testing.T) {
	log := Header + "\n" +
		"1\t:\t1.000\t1.000\t0\t0\t0\t0\t" + strings.Repeat("x", MaxReadLine) + "\n" +
		"2\t:\t1.000\t1.000\t0\t0\t0\t0\tok\n"
	var errs []error
	var seqs []int64
	for e, err := range Entries(strings.NewReader(log)) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		seqs = append(seqs, e.Seq)
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrLineTooLong) || errors.Is(errs[0], ErrMalformed) ||
		!strings.HasPrefix(errs[0].Error(), "line 2: ") {
		t.Errorf("errors %v, want one ErrLineTooLong on line 2", errs)
	}
	if len(seqs) != 1 || seqs[0] != 2 {
		t.Errorf("entries %v, want [2]", seqs)
	}
	path := filepath.Join(t.TempDir(), "log")
	os.WriteFile(path, []byte(log), 0o644)
	if _, err := Load(path); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("Load = %v, want ErrLineTooLong", err)
	}
	// Exactly MaxReadLine bytes, newline included, still reads.
	line := "3\t:\t1.000\t1.000\t0\t0\t0\t0\t"
	line += strings.Repeat("y", MaxReadLine-len(line)-1) + "\n"
	for _, err := range Entries(strings.NewReader(line)) {
		if err != nil {
			t.Errorf("a line of exactly MaxReadLine bytes: %v", err)
		}
	}
}

// TestEntriesTornTail: readers of a log (report, a live run's log) skip a
// last line without newline and say so.
func TestEntriesTornTail(t *testing.T) {
	const line1, line2 = "1\t:\t1.000\t1.000\t0\t0\t0\t0\tok\n", "2\t:\t1.000\t1.000\t0\t0\t0\t0\tcut"
	log := Header + "\n" + line1 + line2
	var seqs []int64
	var torn *Torn
	for e, err := range Entries(strings.NewReader(log)) {
		if err != nil {
			if !errors.As(err, &torn) || !errors.Is(err, ErrMalformed) || !errors.Is(err, ErrTornTail) {
				t.Fatalf("error %v, want a *Torn", err)
			}
			continue
		}
		seqs = append(seqs, e.Seq)
	}
	if len(seqs) != 1 || torn == nil || torn.Line != 3 || torn.Offset != int64(len(Header)+1+len(line1)) || torn.Size != int64(len(line2)) {
		t.Fatalf("entries %v, torn %+v", seqs, torn)
	}
	if msg := torn.Error(); !strings.Contains(msg, "line 3") || !strings.Contains(msg, "did not complete") {
		t.Errorf("message %q", msg)
	}
}
