package runcmd

import (
	"bufio"
	"bytes"
	"io"
)

// firstReader is r, the reader of the first input source, without its
// first record when --skip-first-line asks so (skipFirst).
func (in *inputPlan) firstReader(r io.Reader) io.Reader {
	if !in.skipFirst {
		return r
	}
	delim := in.delim
	if in.pipe != nil || delim == "" {
		delim = "\n"
	}
	return &recordSkipper{r: bufio.NewReader(r), delim: []byte(delim)}
}

// recordSkipper reads r without its bytes up to and including the first
// delim (all of r when it holds none), dropped at the first Read, so that
// a source read later waits for nothing until then.
type recordSkipper struct {
	r       *bufio.Reader
	delim   []byte
	skipped bool
}

func (s *recordSkipper) Read(p []byte) (int, error) {
	if !s.skipped {
		s.skipped = true
		if err := s.skip(); err != nil {
			return 0, err
		}
	}
	return s.r.Read(p)
}

// skip reads up to and including the first delim, keeping only as many
// bytes as delim has.
func (s *recordSkipper) skip() error {
	last := s.delim[len(s.delim)-1]
	var tail []byte
	for {
		chunk, err := s.r.ReadSlice(last)
		tail = append(tail, chunk...)
		if len(tail) > len(s.delim) {
			tail = append(tail[:0], tail[len(tail)-len(s.delim):]...)
		}
		switch {
		case err == nil && bytes.HasSuffix(tail, s.delim):
			return nil
		case err != nil && err != bufio.ErrBufferFull:
			return err
		}
	}
}
