package joblog

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

func (w *Writer) syncCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.syncs
}

// TestSyncBounds is item 3 of the "what to build": records are
// fsync'd after SyncEvery records, within SyncInterval, and at Close, and
// not otherwise.
func TestSyncBounds(t *testing.T) {
	dir := t.TempDir()
	t.Run("every", func(t *testing.T) {
		w, err := Open(filepath.Join(dir, "every"), Options{SyncEvery: 3, SyncInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		base := w.syncCount() // Open syncs the header
		for seq := int64(1); seq <= 7; seq++ {
			if err := w.Write(Entry{Seq: seq}); err != nil {
				t.Fatal(err)
			}
			if got, want := w.syncCount()-base, int(seq/3); got != want {
				t.Fatalf("after %d records: %d fsyncs, want %d", seq, got, want)
			}
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		if got := w.syncCount() - base; got != 3 {
			t.Fatalf("after Sync: %d fsyncs, want 3", got)
		}
		w.Sync() // nothing new to sync
		if got := w.syncCount() - base; got != 3 {
			t.Fatalf("Sync with nothing written synced: %d fsyncs", got)
		}
	})
	t.Run("interval", func(t *testing.T) {
		w, err := Open(filepath.Join(dir, "interval"), Options{SyncEvery: -1, SyncInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		base := w.syncCount()
		w.Write(Entry{Seq: 1})
		w.Write(Entry{Seq: 2})
		testutil.Eventually(t, 10*time.Second, "a timed fsync", func() bool { return w.syncCount() == base+1 })
		time.Sleep(60 * time.Millisecond)
		if got := w.syncCount() - base; got != 1 {
			t.Fatalf("%d fsyncs with nothing new written, want 1", got)
		}
		w.Write(Entry{Seq: 3})
		testutil.Eventually(t, 10*time.Second, "a second timed fsync", func() bool { return w.syncCount() == base+2 })
	})
	t.Run("close", func(t *testing.T) {
		w, err := Open(filepath.Join(dir, "close"), Options{SyncEvery: -1, SyncInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		base := w.syncCount()
		w.Write(Entry{Seq: 1})
		if got := w.syncCount() - base; got != 0 {
			t.Fatalf("%d fsyncs with both bounds off", got)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := w.syncCount() - base; got != 1 {
			t.Fatalf("Close did %d fsyncs, want 1", got)
		}
		if err := w.Write(Entry{Seq: 2}); err == nil {
			t.Fatal("Write after Close succeeded")
		}
		if err := w.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
}

// TestConcurrentWritersAndTimer writes from many goroutines while the sync
// timer fires, then closes with a timer pending: every record is one whole
// line and no timer goroutine outlives Close (goleak checks in TestMain).
func TestConcurrentWritersAndTimer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "joblog")
	w, err := Open(path, Options{SyncEvery: 50, SyncInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				seq := int64(g*100 + i + 1)
				if err := w.Write(Entry{Seq: seq, Command: fmt.Sprint("job ", seq)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for seq := int64(1); seq <= 800; seq++ {
		if !rec.Ended(seq) {
			t.Fatalf("job %d not in the log", seq)
		}
	}
	if rec.Malformed != 0 || rec.Torn != nil {
		t.Fatalf("malformed %d, torn %v", rec.Malformed, rec.Torn)
	}
}
