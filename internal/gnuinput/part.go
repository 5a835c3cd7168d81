package gnuinput

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
)

// partRead is how much SplitFile reads at a time looking for a record
// boundary (GNU parallel's dd block size, 2^17).
const partRead = 131072

// headerMax is the most bytes SplitFile reads looking for a header.
const headerMax = 64 << 20

// PartOptions say how SplitFile cuts a file into the stdin of jobs (GNU
// parallel's --pipepart).
type PartOptions struct {
	// Size is the least size of a part, at least 1: a part ends at the
	// first record boundary found from Size bytes past its start on (GNU
	// parallel's --pipepart, whose parts are at least --block long, where
	// --pipe's are at most).
	Size int64
	// RecEnd, RecStart and Regexp are those of BlockOptions. With Regexp,
	// the boundary is, as GNU parallel finds it, the last one in the
	// first 128 KiB past Size that hold one.
	RecEnd, RecStart string
	Regexp           bool
	// Header is a regular expression matched at the start of the file
	// (--header): its bytes are put in front of every part (looked for in
	// the first 64 MiB).
	Header string
}

// Part is the piece [Start, End) of a file, with its first Header bytes
// in front.
type Part struct {
	Header, Start, End int64
}

// Reader returns the part of the file r as a stream: the header, then the
// part.
func (p Part) Reader(r io.ReaderAt) io.Reader {
	return io.MultiReader(io.NewSectionReader(r, 0, p.Header), io.NewSectionReader(r, p.Start, p.End-p.Start))
}

// SplitFile yields the parts of the file r of size bytes, in order, as GNU
// parallel's --pipepart finds them: it reads only around the places it
// cuts (and the header), never the whole file, so its memory is about
// that of one record. A read error ends the sequence with that error.
func SplitFile(r io.ReaderAt, size int64, o PartOptions) iter.Seq2[Part, error] {
	return func(yield func(Part, error) bool) {
		if o.Size < 1 {
			yield(Part{}, fmt.Errorf("block size %d is not at least 1", o.Size))
			return
		}
		c, err := newCutter(BlockOptions{RecEnd: o.RecEnd, RecStart: o.RecStart, Regexp: o.Regexp, Header: o.Header})
		if err != nil {
			yield(Part{}, err)
			return
		}
		var header int64
		if c.header != nil {
			if header, err = fileHeader(r, size, c); err != nil {
				yield(Part{}, err)
				return
			}
		}
		start := header
		for pos := header + o.Size; pos < size; pos += o.Size {
			at, err := c.boundaryFrom(r, pos, size)
			if err != nil {
				yield(Part{}, err)
				return
			}
			if at < 0 {
				break
			}
			pos = at
			if !yield(Part{Header: header, Start: start, End: pos}, nil) {
				return
			}
			start = pos
		}
		if start < size {
			yield(Part{Header: header, Start: start, End: size}, nil)
		}
	}
}

// fileHeader is the length of the header at the start of r.
func fileHeader(r io.ReaderAt, size int64, c *cutter) (int64, error) {
	for n := int64(4096); ; n *= 2 {
		n = min(n, size, headerMax)
		buf := make([]byte, n)
		if _, err := r.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if m := c.header.FindIndex(buf); m != nil {
			return int64(m[1]), nil
		}
		if n == size || n == headerMax {
			return 0, nil
		}
	}
}

// boundaryFrom is the first record boundary at or after pos (the last in
// the first reads that hold one, with Regexp), or -1 when there is none
// before size.
func (c *cutter) boundaryFrom(r io.ReaderAt, pos, size int64) (int64, error) {
	if len(c.sep) == 0 && c.re == nil {
		return pos, nil
	}
	var buf []byte
	for off := pos; off < size; off += partRead {
		n := min(partRead, size-off)
		old := len(buf)
		buf = append(buf, make([]byte, n)...)
		if _, err := r.ReadAt(buf[old:], off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if c.re != nil {
			if p := c.last(buf); p > 0 {
				return pos + int64(p), nil
			}
			continue
		}
		if i := bytes.Index(buf, c.sep); i >= 0 {
			return pos + int64(i+len(c.o.RecEnd)), nil
		}
	}
	return -1, nil
}
