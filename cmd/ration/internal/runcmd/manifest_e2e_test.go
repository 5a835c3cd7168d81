//go:build linux

package runcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManifestShards: `ration manifest` lists a file set once; the shards
// of `ration run --manifest FILE` (by --shard and by the chart's
// RATION_SHARD_COUNT and JOB_COMPLETION_INDEX) run each file exactly once
// between them, and a file added after the manifest was written is in no
// shard (the manifest is the run's input).
func TestManifestShards(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var names []string
	for i := range 300 {
		names = append(names, fmt.Sprintf("data/%02d/f%03d.txt", i%17, i))
	}
	fileSet(t, dir, names...)
	r := rcmd{dir: dir, args: []string{"manifest", "--files", "data/**/*.txt", "-o", "m.txt"}}.run(t)
	if r.code != 0 || !strings.Contains(r.stderr, "300 files to m.txt") {
		t.Fatalf("manifest: exit %d: %s", r.code, r.stderr)
	}
	fileSet(t, dir, "data/late.txt")
	r = rcmd{dir: dir, args: []string{"manifest", "--files", "data/**/*.txt", "--keep-existing", "-o", "m.txt"}}.run(t)
	if r.code != 0 || !strings.Contains(r.stderr, "m.txt exists, kept") {
		t.Fatalf("manifest --keep-existing: exit %d: %s", r.code, r.stderr)
	}
	for _, viaEnv := range []bool{false, true} {
		seen := map[string]int{}
		for k := range 7 {
			c := rcmd{dir: dir, args: []string{"run", "-q", "--manifest", "m.txt", "--shard", fmt.Sprintf("%d/7", k), "echo"}}
			if viaEnv {
				c.args = []string{"run", "-q", "--manifest", "m.txt", "echo"}
				c.env = []string{"RATION_SHARD_COUNT=7", fmt.Sprintf("JOB_COMPLETION_INDEX=%d", k)}
			}
			r := c.run(t)
			if r.code != 0 {
				t.Fatalf("shard %d/7: exit %d: %s", k, r.code, r.stderr)
			}
			for _, l := range strings.Fields(r.stdout) {
				seen[l]++
			}
		}
		for _, n := range names {
			if seen[n] != 1 {
				t.Errorf("env %v: %s ran %d times", viaEnv, n, seen[n])
			}
		}
		if len(seen) != len(names) {
			t.Errorf("env %v: %d inputs ran, want %d", viaEnv, len(seen), len(names))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "m.txt")); err != nil {
		t.Fatal(err)
	}
}
