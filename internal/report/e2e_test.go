package report_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/report"
	"github.com/ration-run/ration/internal/testutil"
)

// TestPeakNeverAboveJobs runs `ration run -j N` twenty times with short
// jobs that start back to back, and reads each joblog: the peak
// concurrency the report shows must never exceed N, though the logged
// millisecond times make consecutive jobs of a slot appear to overlap.
func TestPeakNeverAboveJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ration binary")
	}
	dir := t.TempDir()
	bin, err := testutil.BuildRation(dir)
	if err != nil {
		t.Fatal(err)
	}
	args := make([]string, 0, 100)
	for i := range 100 {
		args = append(args, strconv.Itoa(i))
	}
	peaks := make([]int, 20)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 5) // five runs at a time keep the test to seconds
	for i := range peaks {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			peaks[i] = runPeak(t, bin, filepath.Join(dir, fmt.Sprintf("run%d.log", i)), 1+i%6, args)
		})
	}
	wg.Wait()
	summary := ""
	for i, p := range peaks {
		summary += fmt.Sprintf(" -j%d:%d", 1+i%6, p)
	}
	t.Logf("peaks:%s", summary)
}

// runPeak runs the jobs args with -j n and returns the peak concurrency
// the report of its joblog shows, after checking it against n.
func runPeak(t *testing.T, bin, logPath string, n int, args []string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"run", "-q", "-j", strconv.Itoa(n), "--joblog", logPath, "--",
		"sh", "-c", "sleep 0.0$(($0%5))", ":::"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("-j %d: %v\n%s", n, err, out)
		return 0
	}
	f, err := os.Open(logPath)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer f.Close()
	run, err := report.Read(f)
	if err != nil {
		t.Error(err)
		return 0
	}
	tot := run.Totals()
	if tot.Jobs != len(args) || tot.PeakConcurrency > n || run.Rows > n {
		t.Errorf("%s with -j %d: %d jobs, peak %d, %d rows", filepath.Base(logPath), n, tot.Jobs, tot.PeakConcurrency, run.Rows)
	}
	for _, s := range run.Concurrency() {
		if s.Running > n {
			t.Errorf("%s with -j %d: %d running at +%v", filepath.Base(logPath), n, s.Running, s.At.Sub(run.Start))
		}
	}
	return tot.PeakConcurrency
}
