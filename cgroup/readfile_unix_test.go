//go:build unix

package cgroup

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFIFOInSnapshot: a snapshot (Reader.Root) holding a FIFO in place of
// a kernel file is read without blocking: one warning naming the file,
// and the reading falls back to what the other files say, as for any
// other bad file. The open of a FIFO used to wait for a writer forever.
func TestFIFOInSnapshot(t *testing.T) {
	for _, c := range []struct{ fixture, file string }{
		{"v2", "sys/fs/cgroup/system.slice/app.service/cpu.max"},
		{"v2", "sys/fs/cgroup/system.slice/app.service/memory.max"},
		{"v1", "sys/fs/cgroup/cpu,cpuacct/ration-test/cpu.cfs_quota_us"},
		{"v1-docker", "proc/meminfo"},
		{"v2", "proc/self/mountinfo"},
		{"v2", "proc/self/status"},
	} {
		t.Run(c.fixture+"/"+c.file, func(t *testing.T) {
			root := copyTree(t, filepath.Join("testdata", c.fixture))
			p := filepath.Join(root, c.file)
			must(t, syscall.Unlink(p))
			must(t, syscall.Mkfifo(p, 0o644))
			type result struct {
				s   Snapshot
				err error
			}
			done := make(chan result, 1)
			go func() {
				s, err := Reader{Root: root}.Read()
				done <- result{s, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(5 * time.Second):
				// Unblock the reader so that the test process can end.
				f, _ := openWriter(p)
				if f >= 0 {
					syscall.Close(f)
				}
				t.Fatal("Read blocked on the FIFO")
			}
			if r.err != nil {
				t.Fatalf("Read: %v", r.err)
			}
			var hits []string
			for _, w := range r.s.Warnings {
				if strings.Contains(w, p) {
					hits = append(hits, w)
				}
			}
			// One line, but for mountinfo, whose loss adds the line an
			// unreadable mountinfo always adds (no cgroup directories).
			if len(hits) == 0 || !strings.Contains(hits[0], "unreadable: not a regular file (a FIFO)") ||
				len(hits) > 1 && !strings.HasSuffix(c.file, "mountinfo") {
				t.Errorf("want one warning naming %s as a FIFO, got %q", p, r.s.Warnings)
			}
		})
	}
}

// openWriter opens the FIFO at p for writing without blocking.
func openWriter(p string) (int, error) {
	return syscall.Open(p, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
}
