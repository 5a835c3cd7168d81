package joblog

import (
	"fmt"
	"strings"
	"testing"
)

// rec is a record of one job: its number, command and status.
type rec struct {
	seq int64
	cmd string
	ok  bool
}

// job is a job of the resumed run and what the Skipper must say of it.
type job struct {
	cmd   string
	seq   int64
	skip  bool
	runAs int64
}

func recordOf(recs []rec) *Record {
	r := &Record{}
	for _, e := range recs {
		exit := 1
		if e.ok {
			exit = 0
		}
		r.add(Entry{Seq: e.seq, Command: e.cmd, Exitval: exit})
	}
	return r
}

// TestSkipper: a resumed run skips the inputs that ended, matched by
// command whatever their number, counts duplicates, runs new ones under
// numbers no record holds, and with failedOnly runs a failed input again
// under the number it failed under.
func TestSkipper(t *testing.T) {
	for _, c := range []struct {
		name       string
		log        []rec
		failedOnly bool
		jobs       []job
	}{
		{"same input as GNU", []rec{{1, "gzip a", true}, {3, "gzip c", false}},
			false, []job{{"gzip a", 1, true, 1}, {"gzip b", 2, false, 2}, {"gzip c", 3, true, 3}, {"gzip d", 4, false, 4}}},
		{"ended inputs gone: the rest renumbered from 1", []rec{{1, "gzip a", true}, {2, "gzip b", true}},
			false, []job{{"gzip c", 1, false, 3}, {"gzip d", 2, false, 4}}},
		{"added and removed", []rec{{1, "gzip a", true}, {2, "gzip b", true}, {3, "gzip c", true}},
			false, []job{{"gzip new", 1, false, 4}, {"gzip b", 2, true, 2}, {"gzip d", 3, false, 5}, {"gzip a", 4, true, 1}, {"gzip e", 5, false, 6}, {"gzip f", 6, false, 7}}},
		{"fresh numbers skip this run's own", []rec{{2, "x", true}},
			false, []job{{"y", 2, false, 3}, {"z", 3, false, 4}, {"w", 4, false, 5}}},
		{"duplicates counted", []rec{{1, "echo a", true}, {3, "echo a", true}},
			false, []job{{"echo a", 1, true, 1}, {"echo a", 2, true, 3}, {"echo a", 3, false, 4}}},
		{"a duplicate takes the record under its own number", []rec{{3, "echo a", true}},
			false, []job{{"echo b", 1, false, 1}, {"echo a", 2, true, 3}, {"echo a", 3, false, 4}}},
		{"resume skips failed", []rec{{1, "false a", false}},
			false, []job{{"false a", 1, true, 1}}},
		{"resume-failed runs failed again under its number", []rec{{1, "ok", true}, {2, "bad", false}},
			true, []job{{"bad", 1, false, 2}, {"ok", 2, true, 1}, {"new", 3, false, 3}}},
		{"resume-failed: one job run again and succeeded", []rec{{2, "bad", false}, {2, "bad", true}},
			true, []job{{"bad", 2, true, 2}, {"bad", 3, false, 3}}},
		{"resume-failed takes a success first", []rec{{1, "a", false}, {2, "a", true}},
			true, []job{{"a", 1, true, 2}, {"a", 2, false, 1}}},
		{"tabs and newlines as the log escapes them", []rec{{1, `printf 'x\ty'`, true}},
			false, []job{{"printf 'x\ty'", 1, true, 1}}},
		{"empty log", nil,
			false, []job{{"a", 1, false, 1}, {"b", 2, false, 2}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := recordOf(c.log).Skipper(c.failedOnly)
			for _, j := range c.jobs {
				skip, runAs := s.Next(j.cmd, j.seq)
				if skip != j.skip || runAs != j.runAs {
					t.Errorf("Next(%q, %d) = %v, %d; want %v, %d", j.cmd, j.seq, skip, runAs, j.skip, j.runAs)
				}
			}
		})
	}
}

// TestSkipperCutCommand: a command longer than the log's line, recorded
// cut, is still matched (and only by a command of its length and start).
func TestSkipperCutCommand(t *testing.T) {
	long := "echo " + strings.Repeat("x", 3000)
	var b strings.Builder
	w := NewWriter(&b)
	w.maxLine = 1 << 10
	if err := w.Write(Entry{Seq: 1, Command: long}); err != nil {
		t.Fatal(err)
	}
	r, err := readRecord(strings.NewReader(b.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Skipper(false)
	if skip, _ := s.Next(long+"y", 1); skip {
		t.Error("a longer command matched the cut record")
	}
	if skip, _ := s.Next("echo "+strings.Repeat("y", 3000), 1); skip {
		t.Error("another command of the same length matched the cut record")
	}
	if skip, n := s.Next(long, 1); !skip || n != 1 {
		t.Errorf("the cut command: Next = %v, %d; want skipped as 1", skip, n)
	}
}

// TestFits: a column fits a skeleton when it holds its pieces in order,
// the first at its start and the last at its end.
func TestFits(t *testing.T) {
	for _, c := range []struct {
		col  string
		skel []string
		want bool
	}{
		{"sleep 0.1 && gzip a.txt", []string{"sleep 0.1 && gzip", ""}, true},
		{"echo second x", []string{"echo first", ""}, false},
		{"echo first a", []string{"echo first", ""}, true},
		{"cp a a.bak", []string{"cp", "", ".bak"}, true},
		{"cp a a.old", []string{"cp", "", ".bak"}, false},
		{"true", []string{"true"}, true},
		{"true x", []string{"true"}, false},
		{"ab", []string{"ab", "b"}, false}, // pieces may not overlap
		{`printf 'x\ty' a`, []string{"printf 'x\ty'", ""}, true},
		{"anything", nil, true},
	} {
		if got := Fits(c.col, c.skel); got != c.want {
			t.Errorf("Fits(%q, %q) = %v, want %v", c.col, c.skel, got, c.want)
		}
	}
}

// TestRecordMisfits: a Record read with a skeleton counts the records of
// another command and keeps the first.
func TestRecordMisfits(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	for i, cmd := range []string{"echo first a", "echo second b", "echo second c"} {
		if err := w.Write(Entry{Seq: int64(i + 1), Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := readRecord(strings.NewReader(b.String()), []string{"echo first", ""})
	if err != nil {
		t.Fatal(err)
	}
	if r.Misfits != 2 || r.Misfit == nil || r.Misfit.Command != "echo second b" {
		t.Errorf("Misfits %d, Misfit %+v; want 2, echo second b", r.Misfits, r.Misfit)
	}
}

func ExampleSkipper() {
	r := &Record{}
	// A run gzipped a and b, then was interrupted; gzip removed them, so
	// the resumed walk yields c and d as jobs 1 and 2.
	r.add(Entry{Seq: 1, Command: "gzip a"})
	r.add(Entry{Seq: 2, Command: "gzip b"})
	s := r.Skipper(false)
	for i, in := range []string{"c", "d"} {
		skip, n := s.Next("gzip "+in, int64(i+1))
		fmt.Println(in, skip, n)
	}
	// Output:
	// c false 3
	// d false 4
}
