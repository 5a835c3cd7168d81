package memory

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGuardFileLRU: the page cache the guard leaves out is the file LRUs
// of memory.stat, under each version's names; shmem, on the anon LRUs,
// stays in.
func TestGuardFileLRU(t *testing.T) {
	for _, tc := range []struct {
		version int
		stat    string
		want    int64
	}{
		{2, "anon 100\nfile 70\nshmem 20\nactive_file 30\ninactive_file 20\nactive_anon 90\n", 50},
		{1, "cache 5\nactive_file 1\ntotal_cache 70\ntotal_shmem 20\ntotal_active_file 30\ntotal_inactive_file 20\n", 50},
		{2, "", 0},
	} {
		dir := t.TempDir()
		if tc.stat != "" {
			if err := os.WriteFile(filepath.Join(dir, "memory.stat"), []byte(tc.stat), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		g := &Guard{dir: dir, version: tc.version}
		if got := g.fileLRU(); got != tc.want {
			t.Errorf("v%d %q: fileLRU = %d; want %d", tc.version, tc.stat, got, tc.want)
		}
	}
}

func TestGuardReadCount(t *testing.T) {
	f := filepath.Join(t.TempDir(), "memory.current")
	if err := os.WriteFile(f, []byte("209715200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	buf := make([]byte, 32)
	for range 2 { // read again from the start
		if n, err := readCount(fh, buf); n != 200<<20 || err != nil {
			t.Errorf("readCount = %d, %v; want %d", n, err, 200<<20)
		}
	}
}
