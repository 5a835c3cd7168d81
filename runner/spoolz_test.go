package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/runner/input"
)

// seqText is the output of seq 1 n.
func seqText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// writeIn writes data to s in pieces of varying sizes, as a pipe gives a
// job's output.
func writeIn(t *testing.T, s *spool, data string) {
	t.Helper()
	for i, k := 0, 0; i < len(data); k++ {
		n := min(1+k*7919%40000, len(data)-i)
		if m, err := s.Write([]byte(data[i : i+n])); m != n || err != nil {
			t.Fatalf("Write = %d, %v", m, err)
		}
		i += n
	}
}

// TestSpoolCompressSpills: with compress, the output past the limit goes
// to the file deflated (much smaller than the output, for compressible
// output) and comes back byte for byte.
func TestSpoolCompressSpills(t *testing.T) {
	s := spool{limit: 1000, dir: t.TempDir(), compress: true}
	want := seqText(300000) // 2 MB
	writeIn(t, &s, want)
	if s.f == nil || s.z == nil || s.err != nil {
		t.Fatalf("file %v, compressor %v, err %v", s.f, s.z, s.err)
	}
	st, err := s.f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() == 0 || 2*st.Size() > int64(len(want)) || s.fsize < int64(len(want)-zChunk) {
		t.Errorf("spill file: %d bytes holding %d of %d bytes of output; want less than half", st.Size(), s.fsize, len(want))
	}
	var out bytes.Buffer
	if err := s.writeTo(&out); err != nil || out.String() != want {
		t.Errorf("writeTo: %d bytes (want %d), %v", out.Len(), len(want), err)
	}
	s.reset()
	if s.f != nil || s.z != nil || len(s.buf) != 0 {
		t.Errorf("reset left file %v, compressor %v, %d bytes", s.f, s.z, len(s.buf))
	}
	// The spool is used again after reset (a job's next attempt).
	writeIn(t, &s, want[:5000])
	out.Reset()
	if err := s.writeTo(&out); err != nil || out.String() != want[:5000] {
		t.Errorf("after reset: %d bytes, %v", out.Len(), err)
	}
}

// TestSpoolCompressFileFails: when the compressed file can no longer be
// written, it keeps its whole chunks, what was held stays in memory up to
// FallbackWindow, and past it the stream fails with ErrOutputLost, saying
// how much was kept: the failure handling of an uncompressed spill file.
func TestSpoolCompressFileFails(t *testing.T) {
	s := spool{limit: 1000, dir: t.TempDir(), compress: true}
	want := seqText(1500000) // 10.9 MB, more than the window
	first := 3 * zChunk
	writeIn(t, &s, want[:first])
	if s.z == nil || s.fsize == 0 {
		t.Fatalf("no chunk in the file: %d bytes", s.fsize)
	}
	// The same file, open for reading only: every further write fails.
	ro, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", s.f.Fd()))
	if err != nil {
		t.Skipf("cannot reopen the spill file: %v", err)
	}
	s.f.Close()
	s.f, s.z.sink.w = ro, ro
	inFile := s.fsize

	// Less than the window after the failure: nothing is lost.
	mid := first + 2*zChunk
	writeIn(t, &s, want[first:mid])
	if !s.fallback || s.err != nil || s.fsize != inFile {
		t.Fatalf("fallback %v, err %v, %d bytes in the file (was %d)", s.fallback, s.err, s.fsize, inFile)
	}
	var out bytes.Buffer
	if err := s.writeTo(&out); err != nil || out.String() != want[:mid] {
		t.Fatalf("writeTo: %d bytes (want %d), %v", out.Len(), mid, err)
	}

	// Past the window: the stream fails, keeping a prefix.
	writeIn(t, &s, want[mid:])
	if !errors.Is(s.err, ErrOutputLost) || !strings.Contains(s.err.Error(), "writing the spill file") {
		t.Fatalf("err = %v, want ErrOutputLost naming the spill file", s.err)
	}
	kept := int(inFile) + FallbackWindow
	if !strings.Contains(s.err.Error(), fmt.Sprintf("only the first %d bytes were kept", kept)) {
		t.Errorf("err = %v, want it to say %d bytes were kept", s.err, kept)
	}
	out.Reset()
	if err := s.writeTo(&out); err != nil || out.String() != want[:kept] {
		t.Errorf("writeTo: %d bytes (want the first %d), %v", out.Len(), kept, err)
	}
	s.reset()
}

// TestSpoolCompressTruncatedFile: a spill file that ends before the output
// it should hold is ErrOutputLost when printed, not a short output.
func TestSpoolCompressTruncatedFile(t *testing.T) {
	s := spool{limit: 1000, dir: t.TempDir(), compress: true}
	writeIn(t, &s, seqText(200000))
	if err := s.f.Truncate(s.z.csize / 2); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := s.writeTo(&out); !errors.Is(err, ErrOutputLost) {
		t.Errorf("writeTo = %v, want ErrOutputLost", err)
	}
	s.reset()
}

// TestRunCompressSpillFile: a job of a run whose dialect compresses the
// spill files (runhook.Hooks.CompressSpill, --compress) and whose
// output spills has its spill file, while it runs, deflated on disk, and
// its output printed whole; no file is left.
func TestRunCompressSpillFile(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc/self/fd to find the unlinked spill file")
	}
	tmp, marks := t.TempDir(), t.TempDir()
	written, release := filepath.Join(marks, "written"), filepath.Join(marks, "go")
	want := seqText(400000)
	var out syncBuf
	cfg := Config{
		Command: []string{"sh", "-c", `seq 400000; : >"$1"; while [ ! -e "$2" ]; do sleep 0.02; done`, "sh", written, release},
		Input:   input.Args([]string{"x"}), Jobs: 1, SpillBytes: 4096, TempDir: tmp,
		Stdout: &out, Stderr: &out,
	}
	cfg.Dialect = hookDialect{runhook.Hooks{CompressSpill: true}}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var runErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, runErr = r.Run(context.Background())
	}()
	// However the test ends, the job ends before it.
	defer func() {
		_ = os.WriteFile(release, nil, 0o644)
		<-done
	}()
	// The job has written its output, and ration has read it once the
	// spill file (unlinked at once: found among this process's
	// descriptors) stops growing.
	var size, last int64 = 0, -1
	deadline := time.Now().Add(30 * time.Second)
	for stable := 0; stable < 5 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(written); err != nil {
			continue
		}
		size = spillFileSize(tmp)
		if size > 0 && size == last {
			stable++
		} else {
			stable = 0
		}
		last = size
	}
	// Uncompressed, the file would hold all but the last chunk.
	if size == 0 || 2*size > int64(len(want)-zChunk) {
		t.Errorf("spill file of %d bytes for %d bytes of output: want it deflated to less than half", size, len(want))
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-done
	if runErr != nil {
		t.Fatal(runErr)
	}
	if out.String() != want {
		t.Errorf("output: %d bytes, want the %d bytes of seq 400000", len(out.String()), len(want))
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// spillFileSize is the size of the spill file in dir this process holds
// open, 0 when there is none.
func spillFileSize(dir string) int64 {
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		fd := filepath.Join("/proc/self/fd", e.Name())
		if link, _ := os.Readlink(fd); strings.HasPrefix(link, filepath.Join(dir, "ration-out-")) {
			if st, err := os.Stat(fd); err == nil {
				return st.Size()
			}
		}
	}
	return 0
}
