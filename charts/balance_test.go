package charts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestManySmallShardsBalance simulates the many-small-shards pattern that
// docs/kubernetes.md recommends: shards=16 indexes on parallelism=4 pods.
// Four "pods" (a worker pool of 4) take the pending indexes lowest first,
// as the Job controller does, and run one shard process after another;
// one shard is 10x slower than the others. Because the other pods keep
// taking the remaining shards while the slow one runs, the run ends within
// 1.3x of the ideal: max(total work / 4, the slowest shard), the least
// any schedule on 4 pods can take.
func TestManySmallShardsBalance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds ration and runs 16 shard processes")
	}
	const (
		shards = 16
		pods   = 4
		files  = 160
		slow   = 5 // the 10x slower shard: an index in the first half, as a random one would be
		fast   = "0.05"
		slowly = "0.5"
	)
	bin := buildRation(t)
	dir := t.TempDir()
	for i := range files {
		p := filepath.Join(dir, "in", fmt.Sprintf("f%03d", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Every job sleeps; the slow shard's jobs sleep ten times as long.
	script := fmt.Sprintf(`if [ "$JOB_COMPLETION_INDEX" = %d ]; then sleep %s; else sleep %s; fi`, slow, slowly, fast)

	indexes := make(chan int, shards)
	for i := range shards {
		indexes <- i
	}
	close(indexes)
	took := make([]time.Duration, shards)
	start := time.Now()
	var wg sync.WaitGroup
	for range pods {
		wg.Go(func() {
			for i := range indexes {
				cmd := exec.Command(bin, "run", "-q", "--no-bar", "-j", "2", "--files", "in/**", "--", "sh", "-c", script)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), shardEnv(i, shards)...)
				t0 := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("shard %d: %v\n%s", i, err, out)
				}
				took[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)

	var sum, longest time.Duration
	for _, d := range took {
		sum += d
		longest = max(longest, d)
	}
	ideal := max(sum/pods, longest)
	ratio := float64(wall) / float64(ideal)
	t.Logf("16 shards on 4 pods, shard %d 10x slower: total %v, ideal %v (work %v / 4 pods, slowest shard %v): %.2fx",
		slow, wall.Round(time.Millisecond), ideal.Round(time.Millisecond), sum.Round(time.Millisecond), longest.Round(time.Millisecond), ratio)
	if took[slow] < 5*took[(slow+1)%shards] {
		t.Errorf("shard %d took %v, not much longer than shard %d's %v: the setup is wrong", slow, took[slow], (slow+1)%shards, took[(slow+1)%shards])
	}
	if ratio > 1.3 {
		t.Errorf("total %v is %.2fx the ideal %v, want at most 1.3x", wall, ratio, ideal)
	}
	t.Logf("per shard: %s", fmtDurations(took))
}

func fmtDurations(ds []time.Duration) string {
	s := ""
	for i, d := range ds {
		s += strconv.Itoa(i) + ":" + d.Round(10*time.Millisecond).String() + " "
	}
	return s
}
