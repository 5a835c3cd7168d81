package joblog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// smallDisk mounts a tmpfs of size bytes for the test and unmounts it at
// the end; it skips the test, with the reason, where mounting is not allowed.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skip("cannot mount a tmpfs:", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// TestFullDiskLeavesWholeLines: a record that
// does not fit on the disk used to leave a partial last line, which the
// next record (or the next run's first) merged into.
func TestFullDiskLeavesWholeLines(t *testing.T) {
	dir := smallDisk(t, 16<<10)
	path := filepath.Join(dir, "joblog")
	w, err := Create(path, false)
	if err != nil {
		t.Fatal(err)
	}
	cmd := strings.Repeat("c", 3000) // does not divide the 4 KiB pages
	written := 0
	var werr error
	for seq := int64(1); seq < 100; seq++ {
		if werr = w.Write(Entry{Seq: seq, Command: cmd}); werr != nil {
			break
		}
		written++
	}
	if !errors.Is(werr, syscall.ENOSPC) || !strings.Contains(werr.Error(), fmt.Sprintf("job %d", written+1)) {
		t.Errorf("Write on a full disk: err = %v, want ENOSPC naming job %d", werr, written+1)
	}
	t.Log(werr)
	if err := w.Write(Entry{Seq: 100, Command: "x"}); err == nil {
		t.Error("a Write after a failed one succeeded: the log may now miss a record in the middle")
	}
	if err := w.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Close = %v, want the write error again", err)
	}
	b, _ := os.ReadFile(path)
	if !bytes.HasSuffix(b, []byte("\n")) {
		t.Errorf("the failed write left a partial line (%d bytes in the log)", len(b))
	}
	rec, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for seq := int64(1); seq <= int64(written)+1; seq++ {
		if rec.Ended(seq) != (seq <= int64(written)) {
			t.Errorf("job %d: ended = %v, %d records were written", seq, rec.Ended(seq), written)
		}
	}
	if rec.Malformed != 0 || rec.Torn != nil {
		t.Errorf("%d malformed lines, torn %v", rec.Malformed, rec.Torn)
	}
	// The next run resumes the log as it is, with nothing to repair.
	w, err = Open(path, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if w.Torn() != nil || w.Record().Ended(int64(written)+1) {
		t.Errorf("resume found torn %v", w.Torn())
	}
	w.Close()
}
