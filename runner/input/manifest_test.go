package input

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// TestManifestShards: the shards of a manifest, in order, are its
// records, each once, for any count, record lengths (empty ones, ones
// longer than the read buffer), separator and last record with or
// without its separator.
func TestManifestShards(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for trial := range 60 {
		sep := byte('\n')
		if trial%3 == 0 {
			sep = 0
		}
		var b bytes.Buffer
		n := rnd.IntN(200)
		for i := range n {
			l := rnd.IntN(40)
			if rnd.IntN(50) == 0 {
				l = 70000 + rnd.IntN(70000)
			}
			if rnd.IntN(20) == 0 {
				l = 0
			}
			b.WriteString(strings.Repeat(string(rune('a'+i%26)), l))
			if i < n-1 || trial%2 == 0 {
				b.WriteByte(sep)
			}
		}
		path := filepath.Join(dir, fmt.Sprint(trial))
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		want := collect(t, File(path, sep))
		for _, count := range []int{1, 2, 3, 7, 20, 64, 500} {
			var got []string
			for k := range count {
				got = append(got, collect(t, Manifest(path, sep, k, count))...)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d, %d shards: %d records, want %d", trial, count, len(got), len(want))
			}
		}
	}
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r *bytes.Reader
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// TestManifestShardReadsItsShare: a shard reads its share of the file and
// about one buffer more, not the file.
func TestManifestShardReadsItsShare(t *testing.T) {
	var b bytes.Buffer
	for i := range 200000 {
		fmt.Fprintf(&b, "data/%03d/file-%07d.txt\n", i%997, i)
	}
	size := int64(b.Len())
	for _, k := range []int{0, 7, 19} {
		c := &countingReaderAt{r: bytes.NewReader(b.Bytes())}
		start, end := shardRange(size, k, 20)
		recs := 0
		err := readShard(c, size, start, end, '\n', func(string, error) bool { recs++; return true })
		if err != nil {
			t.Fatal(err)
		}
		if limit := size/20 + 2*64*1024; c.n.Load() > limit {
			t.Errorf("shard %d/20 of %d bytes read %d bytes, want at most %d", k, size, c.n.Load(), limit)
		}
		if recs < 200000/20-1 || recs > 200000/20+1 {
			t.Errorf("shard %d/20: %d records, want about %d", k, recs, 200000/20)
		}
	}
}

func TestManifestBadShard(t *testing.T) {
	for _, c := range [][2]int{{-1, 3}, {3, 3}, {0, 0}} {
		for _, err := range Manifest("x", '\n', c[0], c[1]) {
			if err == nil || !strings.Contains(err.Error(), "does not exist") {
				t.Errorf("shard %d of %d: %v", c[0], c[1], err)
			}
		}
	}
}
