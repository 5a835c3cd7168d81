package gnuinput

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ration-run/ration/runner/input"
)

// ErrBadOption is wrapped by the errors of the option parsers of this
// package (ParseDelimiter, ParseTrim, ...).
var ErrBadOption = errors.New("bad option")

// Trim says which blanks --trim removes from every value (after --colsep,
// from every column), as in GNU parallel. Blanks are those of Perl's \s:
// space, \t, \n, \v, \f and \r.
type Trim uint8

// The values of --trim.
const (
	TrimNone  Trim = iota // n: keep the value as read (the default)
	TrimLeft              // l
	TrimRight             // r
	TrimBoth              // lr or rl
)

// ParseTrim parses the argument of --trim: "n", "l", "r", "lr" or "rl".
func ParseTrim(s string) (Trim, error) {
	switch s {
	case "n", "":
		return TrimNone, nil
	case "l":
		return TrimLeft, nil
	case "r":
		return TrimRight, nil
	case "lr", "rl":
		return TrimBoth, nil
	}
	return TrimNone, fmt.Errorf("%w: --trim %q: want n, l, r, lr or rl", ErrBadOption, s)
}

const blanks = " \t\n\v\f\r"

// Apply returns s trimmed as t says.
func (t Trim) Apply(s string) string {
	switch t {
	case TrimLeft:
		return strings.TrimLeft(s, blanks)
	case TrimRight:
		return strings.TrimRight(s, blanks)
	case TrimBoth:
		return strings.Trim(s, blanks)
	}
	return s
}

// ParseDelimiter parses the argument of -d/--delimiter exactly as GNU
// parallel does (UnquotePrintf), so that a -d written for GNU parallel
// splits the same records. The delimiter may be several bytes long ("xy");
// it may not be empty, nor hold an escape above \377 (GNU parallel would
// make it a wide character).
func ParseDelimiter(s string) (string, error) {
	s, err := UnquotePrintf(s)
	if err != nil {
		return "", fmt.Errorf("%w: -d: %w", ErrBadOption, err)
	}
	if s == "" {
		return "", fmt.Errorf("%w: -d: empty delimiter (GNU parallel's -d '' is Perl's paragraph mode, records separated by blank lines, which ration does not support)", ErrBadOption)
	}
	return s, nil
}

// UnquotePrintf decodes the escapes of s as GNU parallel's unquote_printf
// does for -d and --tagstring: one pass each, in this order, replaces \t,
// \n and \r, then \NNN (three digits), then \N (one digit), the digits
// read as a Perl string escape (octal digits, so \8 is "8" and \189 is \1
// followed by "89"). Nothing else is an escape: \\ is two backslashes and
// \x41 is four characters, as in GNU parallel. A later pass may decode what
// an earlier one made (\1345 is \134, a backslash, then \5). An escape
// above \377, which GNU parallel would make a wide character, is an error.
func UnquotePrintf(s string) (string, error) {
	s = strings.NewReplacer(`\t`, "\t").Replace(s)
	s = strings.NewReplacer(`\n`, "\n").Replace(s)
	s = strings.NewReplacer(`\r`, "\r").Replace(s)
	var err error
	for _, digits := range []int{3, 1} {
		if s, err = perlOctalPass(s, digits); err != nil {
			return "", err
		}
	}
	return s, nil
}

// perlOctalPass is GNU parallel's s/\\(\d{n})/eval 'sprintf "\\'.$1.'"'/ge:
// every backslash followed by n decimal digits becomes what Perl makes of
// that escape in a double-quoted string.
func perlOctalPass(s string, n int) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+n >= len(s) || !allDigits(s[i+1:i+1+n]) {
			b.WriteByte(s[i])
			continue
		}
		d := s[i+1 : i+1+n]
		j := 0
		for j < len(d) && d[j] <= '7' {
			j++
		}
		if j == 0 { // \8 and \9 are no escapes in Perl: the digit stays
			b.WriteString(d)
		} else {
			v, err := strconv.ParseUint(d[:j], 8, 8)
			if err != nil {
				return "", fmt.Errorf("escape \\%s is above \\377", d[:j])
			}
			b.WriteByte(byte(v))
			b.WriteString(d[j:])
		}
		i += n
	}
	return b.String(), nil
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// SplitOptions configures Split.
type SplitOptions struct {
	// Delim ends every record: "\n" when empty, "\x00" for -0/--null, or
	// the result of ParseDelimiter for -d.
	Delim string
	// EOF, when not empty, is -E: the record equal to it ends the input,
	// and neither it nor what follows is yielded.
	EOF string
	// NUL is called once, on the first record that holds a NUL byte when
	// Delim is not NUL. As GNU parallel does, such a NUL is replaced by the
	// two characters `\0`, because an argument cannot hold a NUL; the
	// caller should warn once that -0 may be what the user meant. Nil
	// replaces silently.
	NUL func()
}

// Split yields the records of r as opts says, without the delimiter. A last
// record without a delimiter is yielded when it is not empty; empty records
// in the middle are inputs like any other, as in GNU parallel. Records may
// be of any length. Like Reader, it reads r once: it is not re-iterable.
func Split(r io.Reader, opts SplitOptions) input.Seq {
	delim := opts.Delim
	if delim == "" {
		delim = "\n"
	}
	raw := input.Reader(r, delim[len(delim)-1])
	if len(delim) > 1 {
		raw = multiSplit(r, delim)
	}
	warned := false
	return func(yield func(string, error) bool) {
		for rec, err := range raw {
			if err != nil {
				yield("", err)
				return
			}
			if opts.EOF != "" && rec == opts.EOF {
				return
			}
			if delim != "\x00" && strings.IndexByte(rec, 0) >= 0 {
				if !warned && opts.NUL != nil {
					warned = true
					opts.NUL()
				}
				rec = strings.ReplaceAll(rec, "\x00", `\0`)
			}
			if !yield(rec, nil) {
				return
			}
		}
	}
}

// multiSplit splits r on a delimiter of several bytes.
func multiSplit(r io.Reader, delim string) input.Seq {
	last := delim[len(delim)-1]
	return func(yield func(string, error) bool) {
		br := bufio.NewReaderSize(r, 64*1024)
		var acc []byte
		for {
			chunk, err := br.ReadSlice(last)
			acc = append(acc, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err == nil && bytes.HasSuffix(acc, []byte(delim)) {
				if !yield(string(acc[:len(acc)-len(delim)]), nil) {
					return
				}
				acc = acc[:0]
				continue
			}
			if err == nil {
				continue
			}
			if len(acc) > 0 && !yield(string(acc), nil) {
				return
			}
			if !errors.Is(err, io.EOF) {
				yield("", err) // the os error names the file; Open names the source
			}
			return
		}
	}
}

// Until yields the values of s up to the one equal to eof (-E on a :::
// source); an empty eof yields them all.
func Until(s input.Seq, eof string) input.Seq {
	if eof == "" {
		return s
	}
	return func(yield func(string, error) bool) {
		for v, err := range s {
			if err == nil && v == eof {
				return
			}
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// JoinContinued joins a record that ends with a blank with the records
// after it, as -L does in GNU parallel and xargs: "a b \nc" is the one
// argument "a b c". It is Lines(s, true, false).
func JoinContinued(s input.Seq) input.Seq { return Lines(s, true, false) }

// Lines applies GNU parallel's -L continuation (join) and -r (skipBlank)
// to the records of a source, in GNU parallel's order: a record is first
// appended to the one it continues, then, with skipBlank, left out when
// that holds blanks only (so a blank record that continues another is
// kept, being part of it), then, with join, continued on the next record
// when it ends in a blank. A blank is any of Perl's \s, as GNU parallel's
// /\s$/ and /^\s*$/ have it: a space, a tab, \r (a CRLF line continues),
// \f, \v and, with -0, \n; not a Unicode space such as U+00A0, which
// is a value GNU parallel keeps.
func Lines(s input.Seq, join, skipBlank bool) input.Seq {
	if !join && !skipBlank {
		return s
	}
	return func(yield func(string, error) bool) {
		var acc strings.Builder
		pending := false
		for v, err := range s {
			if err != nil {
				if pending && !yield(acc.String(), nil) {
					return
				}
				yield("", err)
				return
			}
			acc.WriteString(v)
			r := acc.String()
			if skipBlank && strings.Trim(r, blanks) == "" {
				acc.Reset()
				pending = false
				continue
			}
			pending = true
			if join && r != "" && strings.IndexByte(blanks, r[len(r)-1]) >= 0 {
				continue
			}
			if !yield(r, nil) {
				return
			}
			acc.Reset()
			pending = false
		}
		if pending {
			yield(acc.String(), nil)
		}
	}
}
