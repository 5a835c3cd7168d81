// Package input yields the inputs of a run lazily, one at a time, from
// command-line arguments, line- or NUL-separated streams, and file globs, so
// that jobs start before the input ends and a million inputs take no more
// memory than one.
//
// Every source is an iter.Seq2[string, error]. A non-nil error is the last
// value a source yields: the input could not be read on, and the run must
// stop taking inputs (what was already read stays valid).
//
// It imports the standard library only. GNU parallel's input dialect
// (several sources, batches, --pipe blocks) is built on it in
// internal/gnuinput, which this package must not import.
package input

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
)

// Seq is a stream of inputs. A non-nil error ends it.
type Seq = iter.Seq2[string, error]

// Args yields the arguments in order.
func Args(args []string) Seq {
	return func(yield func(string, error) bool) {
		for _, a := range args {
			if !yield(a, nil) {
				return
			}
		}
	}
}

// Reader yields the records of r separated by sep ('\n' for lines, 0 for
// -0/--null), without the separator. A last record without a separator is
// yielded when it is not empty; empty records in the middle are inputs like
// any other, as in GNU parallel. Records may be of any length.
func Reader(r io.Reader, sep byte) Seq {
	return func(yield func(string, error) bool) {
		br := bufio.NewReaderSize(r, 64*1024)
		for {
			rec, err := br.ReadSlice(sep)
			if errors.Is(err, bufio.ErrBufferFull) {
				// A long record: collect it the slow way.
				buf := append([]byte(nil), rec...)
				for errors.Is(err, bufio.ErrBufferFull) {
					rec, err = br.ReadSlice(sep)
					buf = append(buf, rec...)
				}
				rec = buf
			}
			if len(rec) > 0 && rec[len(rec)-1] == sep && err == nil {
				if !yield(string(rec[:len(rec)-1]), nil) {
					return
				}
				continue
			}
			if len(rec) > 0 {
				if !yield(string(rec), nil) {
					return
				}
			}
			if err != nil && !errors.Is(err, io.EOF) {
				yield("", err) // the os error names the file; Open names the source
			}
			return
		}
	}
}

// File yields the records of the file at path (-a FILE) like Reader. The
// file is opened on the first pull and closed when the stream ends or the
// consumer stops; "-" is not special here. Use Open to check the file
// before a run.
func File(path string, sep byte) Seq {
	return func(yield func(string, error) bool) {
		f, err := os.Open(path)
		if err != nil {
			yield("", fmt.Errorf("input file: %w", err))
			return
		}
		defer f.Close()
		for rec, err := range Reader(f, sep) {
			if err != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
			if !yield(rec, err) {
				return
			}
		}
	}
}

// Concat yields the inputs of each source in turn, stopping at the first
// error.
func Concat(srcs ...Seq) Seq {
	return func(yield func(string, error) bool) {
		for _, s := range srcs {
			for v, err := range s {
				if !yield(v, err) || err != nil {
					return
				}
			}
		}
	}
}
