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

// TestCountFile: the guard's reading of memory.current again and again,
// and the counts it refuses.
func TestCountFile(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    int64
		err     bool
	}{
		{"209715200\n", 200 << 20, false},
		{"0\n", 0, false},
		{"  4096 \n", 4096, false},
		{"max\n", 0, true}, // memory.max's word, not a count
		{"", 0, true},
		{"-1\n", 0, true},
		{"12a\n", 0, true},
		{"9223372036854775807\n", 1<<63 - 1, false},
		{"9223372036854775808\n", 0, true}, // past int64
	} {
		c := testCountFile(t, "memory.current", tc.content)
		for range 2 { // read again from the start
			n, err := c.Read()
			if n != tc.want || (err != nil) != tc.err {
				t.Errorf("%q: Read = %d, %v; want %d, error %v", tc.content, n, err, tc.want, tc.err)
			}
		}
	}
}

// TestCountFileLimit: the limit the guard reads each second, "none" for
// cgroup v2's word and v1's unlimited value.
func TestCountFileLimit(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    int64
		err     bool
	}{
		{"209715200\n", 200 << 20, false},
		{"max\n", 0, false},
		{"9223372036854771712\n", 0, false}, // v1: no limit
		{"x\n", 0, true},
	} {
		c := testCountFile(t, "memory.max", tc.content)
		if n, err := c.ReadLimit(); n != tc.want || (err != nil) != tc.err {
			t.Errorf("%q: ReadLimit = %d, %v; want %d, error %v", tc.content, n, err, tc.want, tc.err)
		}
	}
}

// testCountFile opens a file name holding content, closed at the test's end.
func testCountFile(t *testing.T, name, content string) *countFile {
	t.Helper()
	name = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := openCountFile(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
