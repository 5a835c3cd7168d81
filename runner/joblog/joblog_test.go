package joblog

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		os.Exit(holdMain(path))
	}
	goleak.VerifyTestMain(m)
}

func TestRoundTrip(t *testing.T) {
	in := []Entry{
		{Seq: 1, Host: ":", Start: time.Unix(1795216618, 196e6), Runtime: 1500 * time.Millisecond, Receive: 2, Command: "echo 0"},
		{Seq: 2, Start: time.Unix(1795216618, 201e6), Runtime: 5 * time.Millisecond, Exitval: 1, Command: "echo 'a b'"},
		{Seq: 3, Start: time.Unix(1795216619, 0), Exitval: -1, Signal: 9, Command: "printf '%s\\n' x\ty\nz"},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	for _, e := range in {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 || lines[0] != Header {
		t.Fatalf("got %d lines, header %q", len(lines), lines[0])
	}
	if want := "1\t:\t1795216618.196\t     1.500\t0\t2\t0\t0\techo 0"; lines[1] != want {
		t.Errorf("line 1 = %q, want %q", lines[1], want)
	}
	var out []Entry
	for e, err := range Entries(&buf) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d entries, want %d", len(out), len(in))
	}
	for i := range in {
		got, want := out[i], in[i]
		if want.Host == "" {
			want.Host = LocalHost
		}
		want.Command = strings.NewReplacer("\t", `\t`, "\n", `\n`).Replace(want.Command)
		if got.Seq != want.Seq || got.Host != want.Host || !got.Start.Equal(want.Start) || got.Runtime != want.Runtime ||
			got.Exitval != want.Exitval || got.Signal != want.Signal || got.Command != want.Command || got.Receive != want.Receive {
			t.Errorf("entry %d = %+v, want %+v", i, got, want)
		}
	}
}

func TestParseLineMalformed(t *testing.T) {
	for _, line := range []string{
		"",
		"1\t:\t1.0",
		"x\t:\t1.0\t1.0\t0\t0\t0\t0\tcmd",
		"1\t:\tnan\t1.0\t0\t0\t0\t0\tcmd",
		"1\t:\t1.0\t-1\t0\t0\t0\t0\tcmd",
		"0\t:\t1.0\t1.0\t0\t0\t0\t0\tcmd",
		"99999999999\t:\t1.0\t1.0\t0\t0\t0\t0\tcmd",
		"1\t:\t1.0\t1.0\t0\t0\tone\t0\tcmd",
	} {
		if _, err := ParseLine(line); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseLine(%q) err = %v, want ErrMalformed", line, err)
		}
	}
}

// TestGNUParallelJoblog reads a joblog written by GNU parallel itself, when
// it is installed (CI installs it).
func TestGNUParallelJoblog(t *testing.T) {
	parallel, err := exec.LookPath("parallel")
	if err != nil {
		t.Skip("GNU parallel not installed:", err)
	}
	path := filepath.Join(t.TempDir(), "log")
	cmd := exec.Command(parallel, "--will-cite", "--joblog", path, "-j2", "echo {}; exit {}", ":::", "0", "1", "3")
	cmd.Run() // exits with the number of failures
	rec, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.ReadFile(path)
	n := 0
	for e, err := range Entries(bytes.NewReader(f)) {
		if err != nil {
			t.Fatalf("%v in %q", err, f)
		}
		n++
		if wantOK := e.Command == "echo 0; exit 0"; e.Succeeded() != wantOK {
			t.Errorf("entry %+v: Succeeded = %v", e, e.Succeeded())
		}
		if e.Start.Before(time.Now().Add(-time.Minute)) || e.Host != LocalHost {
			t.Errorf("entry %+v: bad start or host", e)
		}
	}
	if n != 3 || rec.Malformed != 0 {
		t.Fatalf("read %d entries, %d malformed from %q", n, rec.Malformed, f)
	}
}

func TestCreateAndLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "joblog")
	if rec, err := Load(path); err != nil || rec.Ended(1) {
		t.Fatalf("Load(missing) = %v, %v", rec, err)
	}
	w, err := Create(path, true)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Entry{Seq: 1, Command: "a"})
	w.Write(Entry{Seq: 3, Exitval: 2, Command: "c"})
	w.Close()
	// A crash mid-write leaves a partial line; resume cuts it off, so the
	// next record is a line of its own (it used to merge into the torn one,
	// and both were lost as one malformed line).
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("4\t:\t17")
	f.Close()
	w, err = Create(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if torn := w.Torn(); torn == nil || torn.Prefix != "4\t:\t17" || torn.Line != 4 {
		t.Errorf("Torn() = %v, want the cut line 4", torn)
	}
	w.Write(Entry{Seq: 200, Command: "z"})
	w.Close()
	rec, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for seq, want := range map[int64][2]bool{1: {true, true}, 2: {false, false}, 3: {true, false}, 4: {false, false}, 200: {true, true}} {
		if rec.Ended(seq) != want[0] || rec.Succeeded(seq) != want[1] {
			t.Errorf("seq %d: ended %v succeeded %v, want %v", seq, rec.Ended(seq), rec.Succeeded(seq), want)
		}
	}
	if rec.Malformed != 0 || rec.Torn != nil {
		t.Errorf("Malformed = %d, Torn = %v, want none", rec.Malformed, rec.Torn)
	}
	// Without appendExisting the log starts over.
	w, _ = Create(path, false)
	w.Close()
	if rec, _ := Load(path); rec.Ended(1) {
		t.Error("Create(path, false) kept old entries")
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add("1\t:\t1795216618.196\t     0.000\t0\t2\t0\t0\techo 0; exit 0")
	f.Add("3\t:\t1795216618.206\t     0.004\t0\t4\t2\t0\techo 'a b'")
	f.Add("1\t:\t1e300\t1\t0\t0\t0\t0\t")
	f.Fuzz(func(t *testing.T, line string) {
		e, err := ParseLine(line)
		if err != nil {
			return
		}
		// A parsed entry formats to a line that parses to the same entry.
		again, err := ParseLine(strings.TrimSuffix(e.line(), "\n"))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", e.line(), err)
		}
		if again.Seq != e.Seq || again.Exitval != e.Exitval || again.Signal != e.Signal {
			t.Fatalf("round trip changed %+v to %+v", e, again)
		}
	})
}
