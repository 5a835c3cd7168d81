package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// DefaultSpill is the output size of one stream of one job above which the
// output is moved from memory to a temporary file (Config.SpillBytes 0).
const DefaultSpill = 1 << 20

// FallbackWindow is how much of one output stream of one job is kept in
// memory when no temporary file can hold it (TMPDIR missing, unwritable or
// full). Output beyond it is dropped and the job fails, saying why: the
// memory of a run stays bounded whatever its jobs write.
const FallbackWindow = 8 << 20

// MaxPartialLine is the longest unfinished line --line-buffer holds for
// one stream of one job: a longer line is printed in pieces of this size,
// so a job writing without newlines takes no more memory than this.
const MaxPartialLine = 64 << 10

// ErrOutputLost is wrapped by the error of a job whose output could not
// be kept until it was printed (no temporary file, and more than
// FallbackWindow bytes): the job fails, and --resume-failed runs it again.
var ErrOutputLost = errors.New("output lost")

// ErrOutputGone is wrapped by Run's error when ration's own stdout or
// stderr cannot be written (a closed pipe, a full disk, a closed
// descriptor): the job whose output failed is not recorded as succeeded,
// no further job starts and the running ones are stopped.
var ErrOutputGone = errors.New("cannot write the output")

// spool holds one output stream of a job until it is printed: in memory up
// to limit bytes, then in a temporary file that is unlinked as soon as it is
// created, so no file is left behind whatever happens to ration. When no
// file can be made or written, it keeps up to FallbackWindow bytes in
// memory and then drops the rest, remembering why (err).
type spool struct {
	buf   []byte
	f     *os.File
	fsize int64 // bytes of output in f (before compression, with z)
	limit int
	dir   string
	// compress (--compress) deflates what goes to the file; z is its
	// compressor once the file is made (spoolz.go).
	compress bool
	z        *spoolZ
	// fallback is set once the file failed: the rest stays in buf, up to
	// FallbackWindow bytes.
	fallback bool
	spillErr error // why the file failed
	err      error // the output is incomplete: why
}

// Write never fails, so that the job is never killed by a write error of
// ration's: a failure to keep the output is kept in s.err, for the job's
// result.
func (s *spool) Write(p []byte) (int, error) {
	n := len(p)
	switch {
	case s.err != nil:
		return n, nil
	case s.fallback || (s.f == nil && len(s.buf)+len(p) <= s.limit):
		s.keep(p)
		return n, nil
	case s.f == nil:
		f, err := os.CreateTemp(s.dir, "ration-out-*")
		if err != nil {
			s.spillFailed(fmt.Errorf("cannot create a spill file: %w", err))
			s.keep(p)
			return n, nil
		}
		_ = os.Remove(f.Name())
		s.f = f
		if s.compress {
			s.writeZ(p)
			return n, nil
		}
		if !s.toFile(s.buf) {
			s.keep(p)
			return n, nil
		}
		s.buf = nil
	}
	if s.compress {
		s.writeZ(p)
		return n, nil
	}
	if !s.toFile(p) {
		s.keep(p)
	}
	return n, nil
}

// toFile appends p to the file; on failure it cuts the file back to its
// last whole write, keeps what is in it and switches to the memory window.
func (s *spool) toFile(p []byte) bool {
	m, err := s.f.Write(p)
	if err == nil {
		s.fsize += int64(m)
		return true
	}
	if m > 0 {
		_ = s.f.Truncate(s.fsize)
		_, _ = s.f.Seek(s.fsize, io.SeekStart)
	}
	s.spillFailed(fmt.Errorf("writing the spill file: %w", err))
	return false
}

// spillFailed switches to the memory window. What buf holds stays: it is
// output not yet in the file (the file failed before it took buf, or buf
// is empty), and the window goes on from it.
func (s *spool) spillFailed(err error) {
	s.fallback = true
	s.spillErr = err
}

// keep appends p to the memory window, dropping what does not fit once the
// spill file failed.
func (s *spool) keep(p []byte) {
	if !s.fallback {
		s.buf = append(s.buf, p...)
		return
	}
	room := FallbackWindow - len(s.buf)
	if len(p) > room {
		s.buf = append(s.buf, p[:max(room, 0)]...)
		s.err = fmt.Errorf("%w: %v; only the first %d bytes were kept (in memory, at most %d)",
			ErrOutputLost, s.spillErr, int64(len(s.buf))+s.fsize, FallbackWindow)
		return
	}
	s.buf = append(s.buf, p...)
}

// writeTo copies the stream to w: the file's part first, then memory.
func (s *spool) writeTo(w io.Writer) error {
	if s.f != nil {
		if _, err := s.f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("%w: reading the spill file: %w", ErrOutputLost, err)
		}
		if s.z != nil {
			if err := s.copyZ(w); err != nil {
				return err
			}
		} else if _, err := io.Copy(w, io.LimitReader(s.f, s.fsize)); err != nil {
			return err
		}
	}
	if len(s.buf) == 0 {
		return nil
	}
	_, err := w.Write(s.buf)
	return err
}

// reset empties the stream and releases its file.
func (s *spool) reset() {
	s.buf = s.buf[:0]
	if s.fallback {
		s.buf = nil
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	s.z = nil
	s.fsize, s.fallback, s.err, s.spillErr = 0, false, nil, nil
}

// output collects the stdout and stderr of one job. In group mode (the
// default) both are held until the job ends and then printed together; in
// line mode (--line-buffer) every complete line goes out at once. It also
// keeps the tail of the output, for the running-jobs table.
//
// Locks: mu guards the streams and is held while they are printed, which
// may block on ration's stdout; tailMu guards only the tail and the byte
// count and is never held around a write, so the status report and the
// signal path (Runner.Running) never wait for a blocked stdout.
type output struct {
	mu       sync.Mutex
	out, err spool
	line     bool
	shared   *sharedOut // line mode: where lines go
	partOut  []byte     // line mode: unfinished line
	partErr  []byte
	// gone is the first error writing to the shared stdout or stderr in
	// line mode: the job's output was not fully delivered.
	gone error
	// onGone, when set, is told (on a goroutine of its own) of the
	// first failed write in line mode, so that the run stops at once
	// rather than when the job ends.
	onGone func(error)
	// delivered, when set (-k), is called after flush with its error:
	// the job's record waits for its output.
	delivered func(error)
	// heldLost is why output held before goLive was incomplete
	// (ErrOutputLost), for lost.
	heldLost error

	tailMu   sync.Mutex
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

// newOutput makes the output of a job; its spill files are made in dir
// ("": TMPDIR) once a stream holds more than limit bytes.
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

// Write takes the job's output. It never returns an error: a job must not
// die of ration's trouble with its output, which fails the job instead
// (output.failure).
func (w streamWriter) Write(p []byte) (int, error) {
	o := w.o
	o.tailMu.Lock()
	o.tail = append(o.tail, p[max(len(p)-tailMax, 0):]...)
	if len(o.tail) > 2*tailMax {
		o.tail = append(o.tail[:0], o.tail[len(o.tail)-tailMax:]...)
	}
	o.tailMu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
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
	if i < 0 && len(*part)+len(p) <= MaxPartialLine {
		*part = append(*part, p...)
		return len(p), nil
	}
	// Print up to the last newline; an unfinished line longer than
	// MaxPartialLine goes out in pieces rather than grow without bound.
	head, rest := p[:i+1], p[i+1:]
	if len(rest) > MaxPartialLine {
		cut := len(rest) - len(rest)%MaxPartialLine
		if len(rest)%MaxPartialLine == 0 {
			cut -= MaxPartialLine
		}
		head, rest = p[:i+1+cut], p[i+1+cut:]
	}
	o.shared.mu.Lock()
	if len(*part) > 0 {
		o.deliver(dst, *part)
		*part = (*part)[:0]
	}
	o.deliver(dst, head)
	o.shared.mu.Unlock()
	*part = append(*part, rest...)
	return len(p), nil
}

// deliver writes b to ration's dst, keeping the first error (o.mu and the
// shared lock held).
func (o *output) deliver(dst io.Writer, b []byte) {
	if o.gone != nil || len(b) == 0 {
		return
	}
	if _, err := dst.Write(b); err != nil {
		o.gone = err
		if o.onGone != nil {
			go o.onGone(fmt.Errorf("%w: %w", ErrOutputGone, err))
		}
	}
}

// lastLine returns the last non-empty line the job wrote.
func (o *output) lastLine() string {
	o.tailMu.Lock()
	defer o.tailMu.Unlock()
	t := bytes.TrimRight(o.tail, "\r\n")
	if i := bytes.LastIndexByte(t, '\n'); i >= 0 {
		t = t[i+1:]
	}
	if len(t) > 200 {
		t = t[len(t)-200:]
	}
	return string(t)
}

// receiveWriter counts into o's bytesReceived what passes through it to
// w: the job's output as the joblog counts it (Receive).
type receiveWriter struct {
	w io.Writer
	o *output
}

func (c receiveWriter) Write(p []byte) (int, error) {
	c.o.tailMu.Lock()
	c.o.received += int64(len(p))
	c.o.tailMu.Unlock()
	return c.w.Write(p)
}

// bytesReceived is the joblog's Receive of the job's attempt: what went
// through its receiveWriters (Runner.attemptWriters).
func (o *output) bytesReceived() int64 {
	o.tailMu.Lock()
	defer o.tailMu.Unlock()
	return o.received
}

// lost returns why the job's output could not be kept (ErrOutputLost),
// nil if it was all kept.
func (o *output) lost() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return errors.Join(o.out.err, o.err.err, o.heldLost)
}

// goLive prints what a held job wrote so far (stdout, then stderr, as
// flush) and switches it to line mode: -k --line-buffer's job that is
// first in order (liveOrder). A failed print is kept as flush's error
// would be. It does nothing in line mode, so it may be called twice.
func (o *output) goLive() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.line {
		return
	}
	s := o.shared
	s.mu.Lock()
	err := o.out.writeTo(s.stdout)
	if err == nil {
		err = o.err.writeTo(s.stderr)
	}
	s.mu.Unlock()
	o.heldLost = errors.Join(o.out.err, o.err.err)
	o.out.reset()
	o.err.reset()
	o.line = true
	switch {
	case err == nil:
	case errors.Is(err, ErrOutputLost):
		o.heldLost = errors.Join(o.heldLost, err)
	default:
		o.gone = err
		if o.onGone != nil {
			go o.onGone(fmt.Errorf("%w: %w", ErrOutputGone, err))
		}
	}
}

// discard forgets what a failed attempt wrote (group mode), so that only
// the last attempt's output is printed.
func (o *output) discard() {
	o.mu.Lock()
	if !o.line {
		o.out.reset()
		o.err.reset()
	}
	o.mu.Unlock()
	o.tailMu.Lock()
	o.received = 0
	o.tailMu.Unlock()
}

// flush prints what is held: stdout then stderr, under the shared lock, so
// no other job's output comes in between. It releases the temporary files.
// Its error (wrapping ErrOutputGone) means the output did not reach
// ration's stdout or stderr, in line mode also earlier.
func (o *output) flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs [3]error
	if o.line {
		o.deliver(s.stdout, o.partOut)
		o.deliver(s.stderr, o.partErr)
		o.partOut, o.partErr = nil, nil
		errs[0] = o.gone
	} else {
		errs[1] = o.out.writeTo(s.stdout)
		if errs[1] == nil {
			errs[2] = o.err.writeTo(s.stderr)
		}
		o.out.reset()
		o.err.reset()
	}
	for _, err := range errs {
		if err != nil {
			if errors.Is(err, ErrOutputLost) {
				return err
			}
			return fmt.Errorf("%w: %w", ErrOutputGone, err)
		}
	}
	return nil
}
