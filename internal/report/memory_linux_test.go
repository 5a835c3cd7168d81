package report_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/joblog"
)

// TestReportMemoryBounded renders a 400,000-line joblog, from a file and
// from a pipe, and checks the peak resident memory of `ration report`.
// It keeps a few dozen bytes per line (the timeline rows, start and run
// times), never the lines themselves: it used to keep every parsed line,
// about 700 bytes each (700 MB of RSS for a million lines; 320-340 MB
// here, against about 70 MB now).
func TestReportMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ration binary")
	}
	const jobs = 400_000
	const limit = 128 << 20 // bytes of peak RSS; see the package documentation
	dir := t.TempDir()
	bin, err := testutil.BuildRation(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "big.joblog")
	lines := writeBigJoblog(t, path, jobs)

	for _, viaPipe := range []bool{false, true} {
		args := []string{"report", path, "-o", filepath.Join(dir, "big.html")}
		if viaPipe {
			args = []string{"report", "-", "-o", filepath.Join(dir, "big.html")}
		}
		cmd := exec.Command(bin, args...)
		if viaPipe {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd.Stdin = bufio.NewReader(f) // not an *os.File: ration reads a pipe
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		hang := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() }) // a hang guard only
		rss := peakRSS(cmd.Process.Pid)
		err := cmd.Wait()
		hang.Stop()
		if err != nil {
			t.Fatalf("ration %q: %v\n%s", args, err, out.Bytes())
		}
		t.Logf("pipe=%v: peak RSS %d MB for %d lines", viaPipe, rss>>20, lines)
		if rss > limit {
			t.Errorf("pipe=%v: peak RSS %d MB for %d lines, want at most %d MB", viaPipe, rss>>20, lines, limit>>20)
		}
		if n := countJobBars(t, filepath.Join(dir, "big.html")); n != lines {
			t.Errorf("pipe=%v: %d bars, want %d", viaPipe, n, lines)
		}
	}
}

// writeBigJoblog writes n jobs on 16 slots, every 13th failed, every 50th
// failed once and re-run (a second line), and returns the lines written.
func writeBigJoblog(t *testing.T, path string, n int) (lines int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := joblog.NewWriter(bw)
	w.WriteHeader()
	base := time.Unix(1795216618, 0)
	for i := range n {
		e := joblog.Entry{Seq: int64(i + 1), Host: ":", Start: base.Add(time.Duration(i/16) * 100 * time.Millisecond),
			Runtime: time.Duration(50+i%47) * time.Millisecond, Command: fmt.Sprintf("process --in data/file-%07d.csv --out out/%d.json", i, i)}
		if i%13 == 0 || i%50 == 49 {
			e.Exitval = 1
		}
		if i%50 == 49 { // a failed first attempt, then its re-run
			w.Write(e)
			e.Exitval, e.Start = 0, e.Start.Add(50*time.Millisecond)
			lines++
		}
		lines++
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// peakRSS returns the peak resident memory of the running process pid in
// bytes, its VmHWM read until it exits. The rusage of wait4 would not do:
// Go starts a child with vfork, and Linux counts the parent's resident
// memory at the exec into the child's ru_maxrss (this test's, under -race
// hundreds of MB).
func peakRSS(pid int) int64 {
	var peak int64
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		_, hwm, ok := strings.Cut(string(b), "VmHWM:")
		if err != nil || !ok { // gone, or a zombie: its memory is released
			return peak
		}
		var kb int64
		fmt.Sscan(hwm, &kb)
		peak = max(peak, kb<<10)
		time.Sleep(10 * time.Millisecond)
	}
}

// countJobBars counts the timeline's bars in the report at path, reading
// it in chunks.
func countJobBars(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const bar = `<rect class="job `
	buf := make([]byte, 0, 1<<20)
	n := 0
	for {
		m, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		n += bytes.Count(buf, []byte(bar))
		keep := min(len(buf), len(bar)-1) // a bar cut by the chunk's end
		buf = append(buf[:0], buf[len(buf)-keep:]...)
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
