package runner

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSpoolFallbackWindow: with no place for a spill file, a stream keeps
// FallbackWindow bytes in memory and then fails with ErrOutputLost; the
// job's writes never fail.
func TestSpoolFallbackWindow(t *testing.T) {
	s := spool{limit: 1024, dir: filepath.Join(t.TempDir(), "missing")}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	total := 0
	for total < FallbackWindow+len(chunk)*4 {
		n, err := s.Write(chunk)
		if err != nil || n != len(chunk) {
			t.Fatalf("Write = %d, %v; want the whole chunk, no error", n, err)
		}
		total += n
	}
	if !errors.Is(s.err, ErrOutputLost) || !strings.Contains(s.err.Error(), "spill file") {
		t.Fatalf("err = %v, want ErrOutputLost naming the spill file", s.err)
	}
	if len(s.buf) != FallbackWindow || cap(s.buf) > 2*FallbackWindow {
		t.Errorf("kept %d bytes (cap %d), want the window %d", len(s.buf), cap(s.buf), FallbackWindow)
	}
	var out bytes.Buffer
	if err := s.writeTo(&out); err != nil || out.Len() != FallbackWindow {
		t.Errorf("writeTo: %d bytes, %v", out.Len(), err)
	}
	s.reset()
	if s.err != nil || s.fallback || len(s.buf) != 0 {
		t.Errorf("reset left %v, %v, %d bytes", s.err, s.fallback, len(s.buf))
	}
}

// TestSpoolKeepsMemoryWhenSpillFails: when the spill file cannot be made,
// the output already held in memory stays, and the fallback window goes
// on from it (it used to be dropped, silently: no ErrOutputLost).
func TestSpoolKeepsMemoryWhenSpillFails(t *testing.T) {
	s := spool{limit: 100, dir: filepath.Join(t.TempDir(), "missing")}
	want := strings.Repeat("a", 80) + strings.Repeat("b", 50)
	s.Write([]byte(want[:80]))
	s.Write([]byte(want[80:]))
	var out bytes.Buffer
	if err := s.writeTo(&out); err != nil || s.err != nil || out.String() != want {
		t.Errorf("writeTo: %q, %v; stream error %v; want the %d bytes written", out.String(), err, s.err, len(want))
	}
}

// TestSpoolSpillsToFile: beyond the limit, output goes to a file and comes
// back whole.
func TestSpoolSpillsToFile(t *testing.T) {
	s := spool{limit: 10, dir: t.TempDir()}
	want := strings.Repeat("abcdefghij", 1000)
	for i := 0; i < len(want); i += 7 {
		s.Write([]byte(want[i:min(i+7, len(want))]))
	}
	if s.f == nil || s.err != nil {
		t.Fatalf("file %v, err %v", s.f, s.err)
	}
	var out bytes.Buffer
	if err := s.writeTo(&out); err != nil || out.String() != want {
		t.Errorf("writeTo: %d bytes, %v", out.Len(), err)
	}
	s.reset()
}

// TestLineBufferSplitsLongLines: --line-buffer prints an unfinished line
// longer than MaxPartialLine in pieces, holding at most MaxPartialLine.
func TestLineBufferSplitsLongLines(t *testing.T) {
	var stdout bytes.Buffer
	o := newOutput(&sharedOut{stdout: &stdout, stderr: io.Discard}, true, DefaultSpill, "")
	w := streamWriter{o: o}
	chunk := bytes.Repeat([]byte("y"), 10000)
	total := 0
	for range 100 {
		w.Write(chunk)
		total += len(chunk)
		if len(o.partOut) > MaxPartialLine {
			t.Fatalf("holding %d bytes of an unfinished line", len(o.partOut))
		}
	}
	w.Write([]byte("end\nnext"))
	if err := o.flush(); err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("y", total) + "end\nnext"; stdout.String() != want {
		t.Errorf("printed %d bytes, want %d", stdout.Len(), len(want))
	}
}

// blockingWriter blocks every Write until release is closed.
type blockingWriter struct {
	entered chan struct{}
	once    sync.Once
	release chan struct{}
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return len(p), nil
}

// TestLastLineWhileStdoutBlocks: the running-jobs table (lastLine, the
// byte count) never waits for a write to ration's blocked stdout.
func TestLastLineWhileStdoutBlocks(t *testing.T) {
	for _, line := range []bool{false, true} {
		bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
		o := newOutput(&sharedOut{stdout: bw, stderr: io.Discard}, line, DefaultSpill, "")
		w := receiveWriter{w: streamWriter{o: o}, o: o}
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.Write([]byte("first line\n"))
			if !line {
				o.flush()
			}
		}()
		<-bw.entered
		got := make(chan string)
		go func() { got <- o.lastLine() + " " + strconv.FormatInt(o.bytesReceived(), 10) }()
		select {
		case s := <-got:
			if s != "first line 11" {
				t.Errorf("line %v: lastLine, bytes = %q", line, s)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("line %v: lastLine blocked behind the stdout write", line)
		}
		close(bw.release)
		<-done
	}
}
