//go:build unix

package closedpipe

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

func TestWriter(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cw := New(w)
	if _, err := fmt.Fprintln(cw, "read"); err != nil {
		t.Fatal(err)
	}
	if cw.Closed() || cw.Exit(0) != 0 || cw.Exit(255) != 255 {
		t.Errorf("Closed %v, Exit(0) %d, Exit(255) %d before the reader went away", cw.Closed(), cw.Exit(0), cw.Exit(255))
	}
	r.Close()
	// Go turns the SIGPIPE of a write to a file other than stdout and
	// stderr into EPIPE.
	if _, err := fmt.Fprintln(cw, "lost"); err == nil {
		t.Fatal("a write to a pipe without a reader succeeded")
	}
	if !cw.Closed() || cw.Exit(0) != Status || cw.Exit(255) != 141 {
		t.Errorf("Closed %v, Exit(0) %d, Exit(255) %d after the reader went away, want true, 141, 141", cw.Closed(), cw.Exit(0), cw.Exit(255))
	}
	if Unwrap(cw) != w {
		t.Error("Unwrap did not return the file")
	}
	var b bytes.Buffer
	if Unwrap(&b) != &b {
		t.Error("Unwrap of another writer")
	}
}

// TestOtherErrors: an error that is not a closed pipe leaves the status.
func TestOtherErrors(t *testing.T) {
	f, err := os.Open(os.DevNull) // read-only: writes fail with EBADF
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cw := New(f)
	if _, err := cw.Write([]byte("x")); err == nil {
		t.Fatal("a write to a read-only file succeeded")
	}
	if cw.Closed() || cw.Exit(255) != 255 {
		t.Errorf("Closed %v, Exit(255) %d after EBADF", cw.Closed(), cw.Exit(255))
	}
}
