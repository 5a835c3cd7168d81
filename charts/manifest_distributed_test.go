package charts

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDistributedManifest measures what manifest.generate deploys, on one
// machine: one `ration manifest` walks the file set (walks per run: 1),
// then 20 shards, each a process in its own CPU cgroup with a quota of one
// CPU (as each pod has its own limits.cpu) and told its shard as an
// Indexed Job tells a pod, find their inputs in the manifest: together
// every entry exactly once, with the input directory gone (a shard that
// walked would find nothing). It logs the time a shard takes to find its
// inputs (ration run --manifest --dry-run) for 10^5 and 10^6 entries, and,
// for an empty manifest (ration's start and end), and for 10^5 real files, the time a shard takes to walk them all and keep
// its FNV share as without a manifest. -short skips it.
func TestDistributedManifest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds ration and lists 10^5 files and 10^6 entries")
	}
	const shards = 20
	cpuRoot := childCgroupParent(t)
	bin := buildRation(t)
	if !runFlags(t, bin)["--manifest"] {
		t.Skip("ration run has no --manifest flag")
	}
	dir := t.TempDir()
	const files = 100_000
	for i := range files {
		d := filepath.Join(dir, "in", fmt.Sprintf("d%03d", i%997))
		if i < 997 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%06d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cgs := make([]string, shards)
	for i := range shards {
		cgs[i] = makeCPUCgroup(t, cpuRoot, fmt.Sprintf("ration-manifest-%d-shard-%d", os.Getpid(), i), 100_000)
	}
	// shardRun runs shard i's command in its cgroup and returns its
	// stdout and wall time.
	shardRun := func(i int, args ...string) ([]byte, time.Duration) {
		t.Helper()
		c := inCgroup(t, cgs[i], dir, shardEnv(i, shards), bin, args...)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		start := time.Now()
		if err := c.Run(); err != nil {
			t.Fatalf("shard %d: %q: %v\n%s", i, args, err, errb.String())
		}
		return out.Bytes(), time.Since(start)
	}

	// The one walk, as the hook Job runs it (in shard 0's cgroup: 1 CPU).
	start := time.Now()
	c := inCgroup(t, cgs[0], dir, nil, bin, "manifest", "--files", "in/**", "--keep-existing", "-o", "m5.txt")
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("ration manifest: %v\n%s", err, b)
	}
	walkOnce := time.Since(start)

	// Without a manifest, a shard walks every file to keep its share.
	_, walkShard := shardRun(7, "run", "--files", "in/**", "--dry-run", "--no-bar", "-q", "echo")

	// A 10^6-entry manifest: the same names, ten times over (the shards
	// only read it).
	big, err := os.Create(filepath.Join(dir, "m6.txt"))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(big)
	for r := range 10 {
		for i := range files {
			fmt.Fprintf(bw, "in/d%03d/r%d-f%06d.txt\n", i%997, r, i)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	big.Close()
	// An empty manifest: what a shard takes to start and end.
	if err := os.WriteFile(filepath.Join(dir, "m0.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	// The shards never walk: with the input gone they still find every
	// entry of the manifest.
	if err := os.Rename(filepath.Join(dir, "in"), filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name    string
		entries int
	}{{"m0.txt", 0}, {"m5.txt", files}, {"m6.txt", 10 * files}} {
		seen := make(map[string]int, m.entries)
		var slowest, total time.Duration
		for i := range shards {
			out, took := shardRun(i, "run", "--manifest", m.name, "--dry-run", "--no-bar", "-q", "echo")
			slowest, total = max(slowest, took), total+took
			for _, l := range strings.Fields(string(out)) {
				if l != "echo" {
					seen[l]++
				}
			}
		}
		dups := 0
		for _, n := range seen {
			dups += n - 1
		}
		if len(seen) != m.entries || dups != 0 {
			t.Errorf("%s: the shards found %d distinct entries (%d twice or more), want %d each once", m.name, len(seen), dups, m.entries)
		}
		t.Logf("%d entries, %d shards of 1 CPU: a shard finds its %d inputs in %s on average, %s at most",
			m.entries, shards, m.entries/shards, (total / shards).Round(time.Millisecond), slowest.Round(time.Millisecond))
	}
	t.Logf("10^5 files: ration manifest walks them once in %s; without a manifest each shard walks all of them: %s for shard 7 (x%d shards)",
		walkOnce.Round(time.Millisecond), walkShard.Round(time.Millisecond), shards)
}
