package runner

import (
	"bytes"
	"io"
	"os"
	"sync"
)

// DefaultSpill is the output size of one stream of one job above which the
// output is moved from memory to a temporary file (Config.SpillBytes 0).
const DefaultSpill = 1 << 20

// spool holds one output stream of a job until it is printed: in memory up
// to limit bytes, then in a temporary file that is unlinked as soon as it is
// created, so no file is left behind whatever happens to ration.
type spool struct {
	buf   []byte
	f     *os.File
	limit int
	dir   string
	// failed is set when no temporary file could be made; the output then
	// stays in memory rather than being lost.
	failed bool
}

func (s *spool) Write(p []byte) (int, error) {
	if s.f == nil && (s.failed || len(s.buf)+len(p) <= s.limit) {
		s.buf = append(s.buf, p...)
		return len(p), nil
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, "ration-out-*")
		if err != nil {
			s.failed = true
			s.buf = append(s.buf, p...)
			return len(p), nil
		}
		_ = os.Remove(f.Name())
		if _, err := f.Write(s.buf); err != nil {
			f.Close()
			s.failed = true
			s.buf = append(s.buf, p...)
			return len(p), nil
		}
		s.f, s.buf = f, nil
	}
	return s.f.Write(p)
}

// writeTo copies the stream to w.
func (s *spool) writeTo(w io.Writer) error {
	if s.f == nil {
		if len(s.buf) == 0 {
			return nil
		}
		_, err := w.Write(s.buf)
		return err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, s.f)
	return err
}

// reset empties the stream and releases its file.
func (s *spool) reset() {
	s.buf = s.buf[:0]
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// output collects the stdout and stderr of one job. In group mode (the
// default) both are held until the job ends and then printed together; in
// line mode (--line-buffer) every complete line goes out at once. It also
// keeps the tail of the output, for the running-jobs table.
type output struct {
	mu       sync.Mutex
	out, err spool
	line     bool
	shared   *sharedOut // line mode: where lines go
	partOut  []byte     // line mode: unfinished line
	partErr  []byte
	received int64
	tail     []byte
}

// sharedOut is the runner's stdout and stderr, with the lock that keeps
// the output of different jobs apart.
type sharedOut struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
}

const tailMax = 512

func newOutput(shared *sharedOut, line bool, limit int, dir string) *output {
	return &output{
		out:    spool{limit: limit, dir: dir},
		err:    spool{limit: limit, dir: dir},
		line:   line,
		shared: shared,
	}
}

type streamWriter struct {
	o      *output
	stderr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	o := w.o
	o.mu.Lock()
	defer o.mu.Unlock()
	o.received += int64(len(p))
	o.tail = append(o.tail, p...)
	if len(o.tail) > 2*tailMax {
		o.tail = append(o.tail[:0], o.tail[len(o.tail)-tailMax:]...)
	}
	if !o.line {
		if w.stderr {
			return o.err.Write(p)
		}
		return o.out.Write(p)
	}
	part, dst := &o.partOut, o.shared.stdout
	if w.stderr {
		part, dst = &o.partErr, o.shared.stderr
	}
	i := bytes.LastIndexByte(p, '\n')
	if i < 0 {
		*part = append(*part, p...)
		return len(p), nil
	}
	o.shared.mu.Lock()
	if len(*part) > 0 {
		_, _ = dst.Write(*part)
		*part = (*part)[:0]
	}
	// A write error on our stdout is not the job's: it must not die of
	// it (the runner sees the error when it flushes).
	_, _ = dst.Write(p[:i+1])
	o.shared.mu.Unlock()
	*part = append(*part, p[i+1:]...)
	return len(p), nil
}

// lastLine returns the last non-empty line the job wrote.
func (o *output) lastLine() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	t := bytes.TrimRight(o.tail, "\r\n")
	if i := bytes.LastIndexByte(t, '\n'); i >= 0 {
		t = t[i+1:]
	}
	if len(t) > 200 {
		t = t[len(t)-200:]
	}
	return string(t)
}

func (o *output) bytesReceived() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.received
}

// discard forgets what a failed attempt wrote (group mode), so that only
// the last attempt's output is printed, as in GNU parallel.
func (o *output) discard() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.line {
		o.out.reset()
		o.err.reset()
	}
	o.received = 0
}

// flush prints what is held: stdout then stderr, under the shared lock, so
// no other job's output comes in between. It releases the temporary files.
func (o *output) flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs [4]error
	if o.line {
		if len(o.partOut) > 0 {
			_, errs[0] = s.stdout.Write(o.partOut)
		}
		if len(o.partErr) > 0 {
			_, errs[1] = s.stderr.Write(o.partErr)
		}
		o.partOut, o.partErr = nil, nil
	} else {
		errs[2] = o.out.writeTo(s.stdout)
		errs[3] = o.err.writeTo(s.stderr)
		o.out.reset()
		o.err.reset()
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
