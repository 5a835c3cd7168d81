package gnu

import (
	"bytes"
	"io"
	"sync"
)

// TagWriter puts Tag before every line written through W, the last
// line included when it has no newline. As GNU parallel's, a line ends at
// \n or \r (so what a progress display redraws after \r keeps the tag,
// and a \r\n gets one before the \n).
type TagWriter struct {
	W   io.Writer
	Tag []byte

	mu     sync.Mutex
	inLine bool
}

func (t *TagWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b bytes.Buffer
	for rest := p; len(rest) > 0; {
		if !t.inLine {
			b.Write(t.Tag)
			t.inLine = true
		}
		i := bytes.IndexAny(rest, "\n\r")
		if i < 0 {
			b.Write(rest)
			break
		}
		b.Write(rest[:i+1])
		rest = rest[i+1:]
		t.inLine = false
	}
	if _, err := t.W.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}
