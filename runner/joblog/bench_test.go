package joblog

import (
	"io"
	"path/filepath"
	"testing"
	"time"
)

var benchEntry = Entry{Seq: 12345, Start: time.Unix(1795216618, 196e6), Runtime: 1500 * time.Millisecond,
	Receive: 2, Command: "convert in/photo-0001.jpg -resize 50% out/photo-0001.jpg"}

// BenchmarkWrite is the cost of one record: to a discarding writer (format
// and lock only), and to a file with the default fsync bounds.
func BenchmarkWrite(b *testing.B) {
	b.Run("discard", func(b *testing.B) {
		w := NewWriter(io.Discard)
		for b.Loop() {
			w.Write(benchEntry)
		}
	})
	for _, c := range []struct {
		name string
		opt  Options
	}{
		{"file-default-sync", Options{}},
		{"file-no-sync", Options{SyncEvery: -1, SyncInterval: -1}},
		{"file-sync-every-record", Options{SyncEvery: 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			w, err := Open(filepath.Join(b.TempDir(), "log"), c.opt)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			for b.Loop() {
				if err := w.Write(benchEntry); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
