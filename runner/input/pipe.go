package input

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DefaultBlockSize is GNU parallel's --block default: 1M (1048576 bytes).
const DefaultBlockSize = 1 << 20

// BlockOptions say how Blocks cuts a stream into the stdin of jobs
// (GNU parallel's --pipe).
type BlockOptions struct {
	// Size is the size of a block (--block): Blocks reads until it holds
	// Size bytes (with what was left over from the block before) and cuts
	// after the last whole record, so a block is at most Size long unless
	// one record is longer; then the block grows by Size until it holds a
	// whole record. 0 means DefaultBlockSize.
	Size int
	// Records, when > 0, makes every block exactly this many records
	// (-N), the last one fewer; Size is then unused.
	Records int
	// RecEnd and RecStart say where a record ends and the next one starts
	// (--recend, --recstart): a record boundary is a RecEnd followed by a
	// RecStart. Both empty: every byte is a boundary, so blocks are
	// exactly Size long (GNU parallel's --recend '').
	RecEnd, RecStart string
}

// ParseBlockSize parses --block's size as GNU parallel does: a number with
// an optional unit, K, M, G, T, P being powers of 1024 and k, m, g, t, p
// powers of 1000. It must be at least 1.
func ParseBlockSize(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if t != "" {
		if i := strings.IndexByte("KMGTP", t[len(t)-1]); i >= 0 {
			mult = float64(int64(1) << (10 * (i + 1)))
			t = t[:len(t)-1]
		} else if i := strings.IndexByte("kmgtp", t[len(t)-1]); i >= 0 {
			mult = 1
			for range i + 1 {
				mult *= 1000
			}
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v*mult < 1 || v*mult > 1<<40 {
		return 0, fmt.Errorf("invalid block size %q: want a positive number with an optional unit (K, M, G: 1024, 1024², 1024³; k, m, g: 1000, 1000², 1000³)", s)
	}
	return int(v * mult), nil
}

// Blocks yields r cut into blocks of whole records, as GNU parallel's
// --pipe cuts its stdin: see BlockOptions. It reads r lazily, holding at
// most one block and what is read beyond it, so the memory of a run that
// takes the blocks one at a time is about Size times the blocks in
// flight. A read error ends the sequence with that error, after the data
// read before it.
func Blocks(r io.Reader, o BlockOptions) Seq {
	if o.Size <= 0 {
		o.Size = DefaultBlockSize
	}
	return func(yield func(string, error) bool) {
		var (
			buf  []byte
			eof  bool
			rerr error
		)
		fill := func(n int) {
			if eof || n <= 0 {
				return
			}
			old := len(buf)
			buf = append(buf, make([]byte, n)...)
			m, err := io.ReadFull(r, buf[old:])
			buf = buf[:old+m]
			if err != nil {
				eof = true
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					rerr = err
				}
			}
		}
		for {
			var cut int
			if o.Records > 0 {
				cut = o.nthBoundary(&buf, &eof, fill)
			} else {
				fill(o.Size - len(buf))
				for cut = o.lastBoundary(buf, eof); cut <= 0 && !eof; cut = o.lastBoundary(buf, eof) {
					// No whole record yet: the block grows by another Size.
					fill(o.Size)
				}
			}
			if cut <= 0 {
				cut = len(buf)
			}
			if cut > 0 {
				block := string(buf[:cut])
				buf = append(buf[:0], buf[cut:]...)
				if !yield(block, nil) {
					return
				}
			}
			if eof && len(buf) == 0 {
				if rerr != nil {
					yield("", rerr)
				}
				return
			}
		}
	}
}

// boundaryAt reports whether a record starts at p of b: a RecEnd ends
// there and a whole RecStart starts there (one cut short by the end of b
// does not count: more may come).
func (o *BlockOptions) boundaryAt(b []byte, p int) bool {
	if p <= 0 || p > len(b) || !bytes.HasSuffix(b[:p], []byte(o.RecEnd)) {
		return false
	}
	return o.RecStart == "" || bytes.HasPrefix(b[p:], []byte(o.RecStart))
}

// lastBoundary is the last record boundary in b, 0 if none; at EOF, the
// end of b.
func (o *BlockOptions) lastBoundary(b []byte, eof bool) int {
	if eof {
		return len(b)
	}
	for p := len(b); p > 0; p-- {
		if o.boundaryAt(b, p) {
			return p
		}
	}
	return 0
}

// nthBoundary is where the Records'th record of *buf ends, reading more as
// needed; at EOF with fewer records, the end of *buf.
func (o *BlockOptions) nthBoundary(buf *[]byte, eof *bool, fill func(int)) int {
	n, next := 0, 1
	for {
		for p := next; p <= len(*buf); p++ {
			if o.boundaryAt(*buf, p) {
				if n++; n == o.Records {
					return p
				}
			}
		}
		if *eof {
			return len(*buf)
		}
		// The places a RecStart was cut short at are looked at again.
		next = max(next, len(*buf)+1-len(o.RecStart))
		fill(4096)
	}
}
