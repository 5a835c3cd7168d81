package runner

import (
	"compress/flate"
	"errors"
	"fmt"
	"io"
)

// zChunk is how much output a compressing spool (--compress) gathers in
// memory, past its limit, before it deflates it into the spill file.
// Each chunk ends with a sync flush, so that the file always holds a whole
// prefix of the output, readable however a later write fails, at the cost
// of a few bytes per chunk.
const zChunk = 256 << 10

// spoolZ is the compressor of a spool's file (runhook.Hooks.CompressSpill:
// --compress).
type spoolZ struct {
	// zw is nil once a write to the file failed.
	zw *flate.Writer
	// sink counts the compressed bytes that reached the file.
	sink countWriter
	// csize is the file's size at the end of the last chunk: what is
	// read back.
	csize int64
}

// countWriter writes to w, counting the bytes written.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeZ takes p once the spool has its file, with compress: p joins
// what is held in memory, and once that is a chunk it is deflated into the
// file. When the file fails, the file is cut back to its last whole chunk
// and what was held stays in memory, up to FallbackWindow (as with an
// uncompressed file).
func (s *spool) writeZ(p []byte) {
	if s.z == nil {
		s.z = &spoolZ{sink: countWriter{w: s.f}}
		// BestSpeed: the output of a job is held for a while, not
		// archived.
		s.z.zw, _ = flate.NewWriter(&s.z.sink, flate.BestSpeed)
	}
	s.buf = append(s.buf, p...)
	if len(s.buf) < zChunk {
		return
	}
	z := s.z
	_, err := z.zw.Write(s.buf)
	if err == nil {
		err = z.zw.Flush()
	}
	if err != nil {
		_ = s.f.Truncate(z.csize)
		_, _ = s.f.Seek(z.csize, io.SeekStart)
		z.zw = nil
		held := s.buf
		s.fallback, s.spillErr, s.buf = true, fmt.Errorf("writing the spill file: %w", err), nil
		s.keep(held)
		return
	}
	z.csize = z.sink.n
	s.fsize += int64(len(s.buf))
	if cap(s.buf) > 2*zChunk {
		s.buf = nil // what the spool held before the file: let it go
	} else {
		s.buf = s.buf[:0]
	}
}

// copyZ copies the file's output, inflated, to w (the file is at its
// start). An error reading the file wraps ErrOutputLost; one writing to w
// is returned as it is.
func (s *spool) copyZ(w io.Writer) error {
	zr := flate.NewReader(io.LimitReader(s.f, s.z.csize))
	defer zr.Close()
	_, err := io.CopyN(w, readErr{zr}, s.fsize)
	var re readError
	switch {
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: the spill file ends early", ErrOutputLost)
	case errors.As(err, &re):
		return fmt.Errorf("%w: reading the spill file: %w", ErrOutputLost, re.err)
	}
	return err
}

// readErr marks the errors of r, so that copyZ tells them from w's.
type readErr struct{ r io.Reader }

type readError struct{ err error }

func (e readError) Error() string { return e.err.Error() }

func (r readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = readError{err}
	}
	return n, err
}
