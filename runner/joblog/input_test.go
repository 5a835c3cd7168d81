package joblog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckNotInput: `--joblog f -a f` truncated the
// input before reading it. Paths that differ in text name the same file.
func TestCheckNotInput(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	log := filepath.Join(dir, "log")
	other := filepath.Join(dir, "other")
	os.WriteFile(log, []byte("a\nb\n"), 0o644)
	os.WriteFile(other, []byte("c\n"), 0o644)
	if err := os.Symlink(log, filepath.Join(dir, "sym")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(log, filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{log, "./log", "sym", "hard", "../" + filepath.Base(dir) + "/log"} {
		err := CheckNotInput(log, []string{other, in})
		if !errors.Is(err, ErrSameFile) || !strings.Contains(err.Error(), in) {
			t.Errorf("CheckNotInput(log, %q) = %v, want ErrSameFile naming the input", in, err)
		}
		err = CheckNotInput("sym", []string{in})
		if !errors.Is(err, ErrSameFile) {
			t.Errorf("CheckNotInput(sym, %q) = %v, want ErrSameFile", in, err)
		}
	}
	for _, c := range []struct {
		log    string
		inputs []string
	}{
		{log, []string{other, "missing", ""}},
		{log, nil},
		{"missing", []string{log}},
		{os.DevNull, []string{os.DevNull}}, // not a regular file: never truncated
	} {
		if err := CheckNotInput(c.log, c.inputs); err != nil {
			t.Errorf("CheckNotInput(%q, %q) = %v, want nil", c.log, c.inputs, err)
		}
	}
}

// TestOpenRefusesInput: Open checks Options.Inputs after it opened and
// locked the log and before it changed a byte of it, fresh or resumed.
func TestOpenRefusesInput(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	const content = "input 1\ninput 2\n"
	os.WriteFile(log, []byte(content), 0o644)
	os.Symlink(log, filepath.Join(dir, "sym"))
	for _, resume := range []bool{false, true} {
		w, err := Open(log, Options{Resume: resume, Inputs: []string{filepath.Join(dir, "sym")}})
		if !errors.Is(err, ErrSameFile) {
			w.Close()
			t.Fatalf("Open(resume=%v) with the log as input: %v, want ErrSameFile", resume, err)
		}
		if b, _ := os.ReadFile(log); string(b) != content {
			t.Fatalf("Open(resume=%v) changed the input to %q", resume, b)
		}
	}
	// The refused Open released its lock.
	w, err := Open(log, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
}

// TestOpenTwiceInOneProcess: the lock belongs to the open file, so a
// second Writer in the same process is refused too, and closing it (or
// reading the log by path) does not release the first one's lock.
func TestOpenTwiceInOneProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if w2, err := Open(path, Options{Resume: true}); !errors.Is(err, ErrLocked) {
			w2.Close()
			t.Fatalf("second Open in one process: %v, want ErrLocked", err)
		}
	}
}

// TestOpenDevice: a device joblog (--joblog /dev/stdout) is written, not
// locked, read or truncated.
func TestOpenDevice(t *testing.T) {
	for _, resume := range []bool{false, true} {
		w1, err := Open(os.DevNull, Options{Resume: resume})
		if err != nil {
			t.Fatal(err)
		}
		w2, err := Open(os.DevNull, Options{Resume: resume})
		if err != nil {
			t.Fatalf("second Open of %s: %v", os.DevNull, err)
		}
		if err := w1.Write(Entry{Seq: 1}); err != nil {
			t.Fatal(err)
		}
		if resume && (w1.Record() == nil || w1.Record().Ended(1)) {
			t.Errorf("Record() = %v, want empty", w1.Record())
		}
		if err := errorsJoin(w1.Close(), w2.Close()); err != nil {
			t.Fatal(err)
		}
	}
}

func errorsJoin(errs ...error) error { return errors.Join(errs...) }
