package gnu

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTagWriterConcurrent: writes from several goroutines keep each
// line's tag (run under -race).
func TestTagWriterConcurrent(t *testing.T) {
	var b lockedBuffer
	w := &TagWriter{W: &b, Tag: []byte("T\t")}
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 100 {
				w.Write([]byte("line\n"))
			}
		}()
	}
	for range 4 {
		<-done
	}
	if got := strings.Count(b.String(), "T\tline\n"); got != 400 {
		t.Errorf("%d tagged lines, want 400", got)
	}
}
