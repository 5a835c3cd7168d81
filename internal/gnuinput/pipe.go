package gnuinput

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ration-run/ration/runner/input"
)

// DefaultBlockSize is GNU parallel's --block default: 1M (1048576 bytes).
const DefaultBlockSize = 1 << 20

// headerBlocks is how many blocks of input Blocks reads, at most, looking
// for a header that does not match yet (GNU parallel reads on to the end
// of the input); past them, or at the end of the input, there is no header.
const headerBlocks = 64

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
	// (-N), the last one fewer; Size is then unused. With Lines, a block
	// is Records times Lines records (GNU parallel's -N with -L).
	Records int
	// Lines, when > 0 and Records is 0, makes a record Lines lines (-L
	// with --pipe): blocks are cut, as by Size, after a multiple of Lines
	// newlines, whatever RecEnd and RecStart say.
	Lines int
	// RecEnd and RecStart say where a record ends and the next one starts
	// (--recend, --recstart): a record boundary is a RecEnd followed by a
	// RecStart. Both empty: every byte is a boundary, so blocks are
	// exactly Size long (GNU parallel's --recend '').
	RecEnd, RecStart string
	// Regexp makes RecEnd and RecStart regular expressions (--regexp, Go
	// RE2 syntax): a boundary is where a match of RecEnd, followed by a
	// match of RecStart, ends, the matches found from left to right. An
	// empty RecEnd with an empty RecStart then means any one character.
	// With Records, a stream that does not start with a RecStart makes
	// its first record a block of its own, as in GNU parallel.
	Regexp bool
	// RemoveRecSep removes from every block, before its header is put in
	// front, each RecEnd followed by RecStart, then a RecStart at its
	// start and a RecEnd at its end or before a final newline (--rrs, as
	// GNU parallel's perl does).
	RemoveRecSep bool
	// Header, when not empty, is a regular expression matched at the
	// start of the stream (GNU parallel's --header with --pipe): what it
	// matches is taken off the stream and put in front of every block.
	// Blocks looks for it in the first Size bytes, then in more, a block
	// at a time, up to 64 blocks; a header that does not match by then
	// (or by the end of the stream) is empty.
	Header string
}

// Check reports whether the regular expressions of o compile: RecEnd and
// RecStart with Regexp, and Header. Blocks yields the same error at its
// start.
func (o BlockOptions) Check() error {
	_, err := newCutter(o)
	return err
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

// cutter finds the record boundaries of BlockOptions in a buffer.
type cutter struct {
	o BlockOptions
	// sep is RecEnd+RecStart (not Regexp).
	sep []byte
	// re matches (RecEnd)RecStart, start ^RecStart (Regexp only).
	re, start *regexp.Regexp
	// rrsAll, rrsStart and rrsEnd are RemoveRecSep's three removals.
	rrsAll, rrsStart, rrsEnd *regexp.Regexp
	header                   *regexp.Regexp
}

func newCutter(o BlockOptions) (*cutter, error) {
	c := &cutter{o: o, sep: []byte(o.RecEnd + o.RecStart)}
	end, start := o.RecEnd, o.RecStart
	if !o.Regexp {
		end, start = regexp.QuoteMeta(end), regexp.QuoteMeta(start)
	} else {
		if end == "" && start == "" {
			end = "."
		}
		for _, s := range []struct{ flag, re string }{{"--recend", o.RecEnd}, {"--recstart", o.RecStart}} {
			if _, err := regexp.Compile(s.re); err != nil {
				return nil, fmt.Errorf("%s: %w", s.flag, err)
			}
			if err := byteRegexp(s.re); err != nil {
				return nil, fmt.Errorf("%s: %w", s.flag, err)
			}
		}
	}
	end, start = "(?:"+end+")", "(?:"+start+")"
	var err error
	if o.Regexp {
		c.re = regexp.MustCompile("(?s)(" + end + ")" + start)
		c.start = regexp.MustCompile("(?s)^" + start)
	}
	if o.RemoveRecSep {
		if o.RecEnd+o.RecStart != "" || o.Regexp {
			c.rrsAll = regexp.MustCompile("(?s)" + end + start)
		}
		if o.RecStart != "" {
			c.rrsStart = regexp.MustCompile("(?s)^" + start)
		}
		if o.RecEnd != "" || o.Regexp {
			c.rrsEnd = regexp.MustCompile("(?s)" + end + "(\n?)$")
		}
	}
	if o.Header != "" {
		if c.header, err = regexp.Compile("^(?:" + o.Header + ")"); err != nil {
			return nil, fmt.Errorf("--header: %w", err)
		}
	}
	return c, nil
}

// byteRegexp refuses a --regexp pattern that names a byte above 0x7F (a
// \xHH, \x{H...} or octal escape, or such a byte itself, not part of a
// UTF-8 character): GNU parallel's perl matches it against that byte, Go's
// regexp against a UTF-8 character, which would silently never match.
func byteRegexp(re string) error {
	if !utf8.ValidString(re) {
		return errors.New("holds bytes that are no UTF-8: Go regular expressions match UTF-8 characters, not bytes; give the bytes without --regexp")
	}
	for i := 0; i+1 < len(re); i++ {
		if re[i] != '\\' {
			continue
		}
		i++
		var v uint64
		switch c := re[i]; {
		case c == 'x' && strings.HasPrefix(re[i+1:], "{"):
			if end := strings.IndexByte(re[i:], '}'); end > 0 {
				v, _ = strconv.ParseUint(re[i+2:i+end], 16, 32)
			}
		case c == 'x' && i+3 <= len(re):
			v, _ = strconv.ParseUint(re[i+1:i+3], 16, 8)
		case c >= '0' && c <= '7':
			j := i
			for j < len(re) && j < i+3 && re[j] >= '0' && re[j] <= '7' {
				j++
			}
			v, _ = strconv.ParseUint(re[i:j], 8, 16)
		}
		if v > 0x7f {
			return fmt.Errorf("%s names a byte above 0x7F: Go regular expressions match UTF-8 characters, not bytes; give the byte itself without --regexp", re)
		}
	}
	return nil
}

// next is the first record boundary p > from in b, or -1 when b holds
// none (a RecStart cut short by the end of b does not count: more may
// come). A Lines record is one line here.
func (c *cutter) next(b []byte, from int) int {
	switch {
	case c.o.Lines > 0 && c.o.Records == 0:
		if i := bytes.IndexByte(b[from:], '\n'); i >= 0 {
			return from + i + 1
		}
		return -1
	case c.re != nil:
		for start := from; start <= len(b); {
			m := c.re.FindSubmatchIndex(b[start:])
			if m == nil {
				return -1
			}
			if p := start + m[3]; p > from {
				return p
			}
			start += m[0] + 1
		}
		return -1
	case len(c.sep) == 0:
		if from < len(b) {
			return from + 1
		}
		return -1
	}
	// As GNU parallel's nindex: a separator starts after the one before
	// (and not at the start of a block).
	lo := max(1, from+1-len(c.o.RecEnd))
	if lo > len(b) {
		return -1
	}
	i := bytes.Index(b[lo:], c.sep)
	if i < 0 {
		return -1
	}
	return lo + i + len(c.o.RecEnd)
}

// last is the end of the longest run of whole records at the start of b
// (0 if none): its last boundary, or its last multiple of Lines lines.
func (c *cutter) last(b []byte) int {
	switch {
	case c.o.Lines > 0 && c.o.Records == 0:
		n, cut := 0, 0
		for p := c.next(b, 0); p > 0; p = c.next(b, p) {
			if n++; n%c.o.Lines == 0 {
				cut = p
			}
		}
		return cut
	case c.re != nil:
		cut := 0
		for p := c.next(b, 0); p > 0; p = c.next(b, p) {
			cut = p
		}
		return cut
	case len(c.sep) == 0:
		return len(b)
	}
	if i := bytes.LastIndex(b, c.sep); i >= 0 {
		return i + len(c.o.RecEnd)
	}
	return 0
}

// removeRecSep is b without its record separators (RemoveRecSep).
func (c *cutter) removeRecSep(b string) string {
	if c.rrsAll != nil {
		b = c.rrsAll.ReplaceAllLiteralString(b, "")
	}
	if c.rrsStart != nil {
		if m := c.rrsStart.FindStringIndex(b); m != nil {
			b = b[m[1]:]
		}
	}
	if c.rrsEnd != nil {
		if m := c.rrsEnd.FindStringSubmatchIndex(b); m != nil {
			b = b[:m[0]] + b[m[2]:]
		}
	}
	return b
}

// Blocks yields r cut into blocks of whole records, as GNU parallel's
// --pipe cuts its stdin: see BlockOptions. It reads r lazily, holding at
// most one block and what is read beyond it, so the memory of a run that
// takes the blocks one at a time is about Size times the blocks in
// flight. A read error ends the sequence with that error, after the data
// read before it; so does an error of o.Check, before any block.
func Blocks(r io.Reader, o BlockOptions) input.Seq {
	if o.Size <= 0 {
		o.Size = DefaultBlockSize
	}
	return func(yield func(string, error) bool) {
		c, err := newCutter(o)
		if err != nil {
			yield("", err)
			return
		}
		br := &blockReader{r: r, o: o, c: c}
		header := br.header()
		for first := true; ; first = false {
			cut := br.blockCut()
			if o.Records > 0 {
				cut = br.recordsCut(first)
			}
			if cut <= 0 {
				cut = len(br.buf)
			}
			if cut > 0 {
				block := string(br.buf[:cut])
				br.buf = append(br.buf[:0], br.buf[cut:]...)
				if o.RemoveRecSep {
					block = c.removeRecSep(block)
				}
				if !yield(header+block, nil) {
					return
				}
			}
			if br.eof && len(br.buf) == 0 {
				if br.err != nil {
					yield("", br.err)
				}
				return
			}
		}
	}
}

// blockReader is the state of one Blocks: what was read and not yet
// yielded, and how reading ended.
type blockReader struct {
	r   io.Reader
	o   BlockOptions
	c   *cutter
	buf []byte
	eof bool
	err error // a read error other than EOF
}

// fillChunk is the most fill reads at a time: buf grows with what was
// read, not with what was asked for, so a --block far larger than the
// input (1T) takes no more memory than the input does.
const fillChunk = 1 << 20

// fill reads up to n bytes more into buf.
func (br *blockReader) fill(n int) {
	for n > 0 && !br.eof {
		k := min(n, fillChunk)
		old := len(br.buf)
		br.buf = append(br.buf, make([]byte, k)...)
		m, err := io.ReadFull(br.r, br.buf[old:])
		br.buf = br.buf[:old+m]
		n -= m
		if err != nil {
			br.eof = true
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				br.err = err
			}
		}
	}
}

// header takes the header off the start of the stream, reading a block
// at a time until it matches (see BlockOptions.Header).
func (br *blockReader) header() string {
	if br.c.header == nil {
		return ""
	}
	for {
		br.fill(br.o.Size)
		if m := br.c.header.FindIndex(br.buf); m != nil {
			h := string(br.buf[:m[1]])
			br.buf = append(br.buf[:0], br.buf[m[1]:]...)
			return h
		}
		if br.eof || len(br.buf) >= headerBlocks*br.o.Size {
			return ""
		}
	}
}

// recordsCut is where the next block of Records (times Lines) records
// ends, reading as needed; 0 at the end of the stream with fewer.
func (br *blockReader) recordsCut(first bool) int {
	c := br.c
	want := br.o.Records * max(br.o.Lines, 1)
	if first && c.start != nil {
		br.fill(4096)
		if c.start.Find(br.buf) == nil {
			// GNU parallel: what comes before the first RecStart is a
			// record of its own.
			want = 1
		}
	}
	n, scanned := 0, 0
	for {
		for p := c.next(br.buf, scanned); p > 0; p = c.next(br.buf, p) {
			if n++; n == want {
				return p
			}
			scanned = p
		}
		if br.eof {
			return 0
		}
		br.fill(4096)
	}
}

// blockCut is where the next block of at most Size bytes ends: it is cut
// within limit bytes, which grows by another Size while they hold no
// whole record; at the end, the rest is one block (but -L's records are
// cut). Records > 0: 0, nothing read.
func (br *blockReader) blockCut() int {
	if br.o.Records > 0 {
		return 0
	}
	for limit := br.o.Size; ; limit += br.o.Size {
		br.fill(limit - len(br.buf))
		if br.eof && len(br.buf) <= limit && br.o.Lines == 0 {
			return len(br.buf)
		}
		if cut := br.c.last(br.buf[:min(len(br.buf), limit)]); cut > 0 || br.eof && len(br.buf) <= limit {
			return cut
		}
	}
}
