package joblog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrMalformed is wrapped by the errors that Entries yields for lines that
// are not joblog lines.
var ErrMalformed = errors.New("malformed joblog line")

// ErrTornTail is wrapped by the *Torn error that Entries yields for a last
// line without its newline. It wraps ErrMalformed, so callers that skip
// malformed lines skip a torn one too.
var ErrTornTail = fmt.Errorf("%w: last line has no newline", ErrMalformed)

// ErrLineTooLong is wrapped by the error that Entries yields for a line
// longer than MaxReadLine. It does not wrap ErrMalformed: the line may
// record a finished job, and skipping it would run that job again.
var ErrLineTooLong = fmt.Errorf("joblog line longer than %d bytes", MaxReadLine)

// MaxReadLine is the longest line, newline included, that Entries reads.
// It is larger than any line a Writer writes (MaxLine at most), so every
// joblog ration wrote reads back, and so do GNU parallel's logs with
// commands up to 16 MiB.
const MaxReadLine = 16 << 20

// Torn is a last line without its newline: the write of its record was cut
// off by a crash or a full disk, so the record was never complete and its
// job counts as not ended. It is the error Entries yields for such a line,
// and what Open reports when it cut one off.
type Torn struct {
	Line   int    // 1-based line number
	Offset int64  // byte offset of the line's first byte
	Size   int64  // bytes in the line
	Prefix string // the line's first bytes (at most 64), for a message
}

// Error says which line was torn, where, and that its job counts as not
// ended.
func (t *Torn) Error() string {
	more := ""
	if int64(len(t.Prefix)) < t.Size {
		more = "..."
	}
	return fmt.Sprintf("line %d: %v (%d bytes at offset %d, %q%s): ignored, its job did not complete",
		t.Line, ErrTornTail, t.Size, t.Offset, t.Prefix, more)
}

// Unwrap returns ErrTornTail, so errors.Is(err, ErrTornTail) finds a Torn.
func (t *Torn) Unwrap() error { return ErrTornTail }

// Entries yields the entries of a joblog in file order. Header lines (also
// repeated ones, as concatenated logs have) and empty lines are skipped. A
// malformed line yields an error wrapping ErrMalformed with its line number,
// and reading goes on. A last line without a newline is not a record: it
// yields a *Torn error (which wraps ErrTornTail and ErrMalformed). A line
// longer than MaxReadLine yields an error wrapping ErrLineTooLong, in
// bounded memory, and reading goes on. An I/O error is yielded last.
func Entries(r io.Reader) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		for l := range lines(r) {
			if l.err != nil {
				yield(Entry{}, fmt.Errorf("joblog: %w", l.err))
				return
			}
			if l.torn != nil {
				yield(Entry{}, l.torn)
				return
			}
			if l.tooLong {
				if !yield(Entry{}, fmt.Errorf("line %d: %w", l.n, ErrLineTooLong)) {
					return
				}
				continue
			}
			text := strings.TrimRight(string(l.text), "\r")
			if text == "" || strings.HasPrefix(text, "Seq\t") {
				continue
			}
			e, err := ParseLine(text)
			if err != nil {
				err = fmt.Errorf("line %d: %w", l.n, err)
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

// line is one line of a joblog as lines reads it.
type line struct {
	n       int    // 1-based line number
	off     int64  // offset of its first byte
	text    []byte // without the newline; valid until the next line
	tooLong bool   // longer than MaxReadLine; text is empty
	torn    *Torn  // the last line had no newline; the last one yielded
	err     error  // a read error; the last one yielded
}

// lines splits r into lines of at most MaxReadLine bytes, newline
// included, holding at most that much in memory.
func lines(r io.Reader) iter.Seq[line] {
	return func(yield func(line) bool) {
		br := bufio.NewReaderSize(r, 64<<10)
		var buf []byte
		var off int64
		for n := 1; ; n++ {
			buf = buf[:0]
			var size int64
			var err error
			long := false
			for {
				var chunk []byte
				chunk, err = br.ReadSlice('\n')
				size += int64(len(chunk))
				if !long {
					if size > MaxReadLine {
						long, buf = true, buf[:0]
					} else {
						buf = append(buf, chunk...)
					}
				}
				if err != bufio.ErrBufferFull {
					break
				}
			}
			l := line{n: n, off: off, tooLong: long}
			off += size
			switch {
			case err == io.EOF && size == 0:
				return
			case err == io.EOF:
				l.torn = &Torn{Line: n, Offset: l.off, Size: size, Prefix: string(buf[:min(len(buf), 64)])}
			case err != nil:
				l.err = err
			default:
				l.text = bytes.TrimSuffix(buf, []byte("\n"))
				if long {
					l.text = nil
				}
			}
			if !yield(l) || l.torn != nil || l.err != nil {
				return
			}
		}
	}
}

// ParseLine parses one joblog line without its newline.
func ParseLine(line string) (Entry, error) {
	f := strings.SplitN(line, "\t", 9)
	if len(f) != 9 {
		if len(f) == 1 {
			return Entry{}, fmt.Errorf("%w: 1 field (no tab), want 9", ErrMalformed)
		}
		return Entry{}, fmt.Errorf("%w: %d fields, want 9", ErrMalformed, len(f))
	}
	var e Entry
	var err error
	field := func(name, s string, dst *int64) {
		if err != nil {
			return
		}
		v, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if perr != nil {
			err = fmt.Errorf("%w: %s %q is not an integer", ErrMalformed, name, s)
		}
		*dst = v
	}
	var exitval, signal int64
	field("Seq", f[0], &e.Seq)
	field("Send", f[4], &e.Send)
	field("Receive", f[5], &e.Receive)
	field("Exitval", f[6], &exitval)
	field("Signal", f[7], &signal)
	if err != nil {
		return Entry{}, err
	}
	start, perr := parseSeconds(f[2])
	if perr != nil {
		return Entry{}, fmt.Errorf("%w: Starttime %q: %v", ErrMalformed, f[2], perr)
	}
	runtime, perr := parseSeconds(f[3])
	if perr != nil || runtime < 0 || runtime > maxRuntime {
		return Entry{}, fmt.Errorf("%w: JobRuntime %q is not a duration in seconds", ErrMalformed, f[3])
	}
	if e.Seq < 1 || e.Seq > MaxSeq {
		return Entry{}, fmt.Errorf("%w: Seq %d is not in 1..%d", ErrMalformed, e.Seq, int64(MaxSeq))
	}
	e.Host = f[1]
	// The log keeps milliseconds; rounding to them undoes float error.
	e.Start = time.UnixMilli(int64(math.Round(start * 1e3)))
	e.Runtime = time.Duration(math.Round(runtime*1e3)) * time.Millisecond
	e.Exitval, e.Signal = int(exitval), int(signal)
	e.Command = f[8]
	return e, nil
}

// maxRuntime is the longest JobRuntime in seconds, about 292 years: what a
// time.Duration holds. A longer one would wrap around to a negative run
// time.
const maxRuntime = float64(math.MaxInt64/int64(time.Millisecond)) / 1e3

func parseSeconds(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e12 {
		return 0, fmt.Errorf("out of range")
	}
	return v, nil
}
