package gnuinput

import (
	"fmt"
	"iter"
	"regexp"
	"strings"

	"github.com/ration-run/ration/runner/input"
)

// Arg is one argument of a job: its fields, one per input source when
// several are combined (:::, ::::, -a), several per source with --colsep.
type Arg []string

// String returns the fields joined by a space, as GNU parallel's {} shows
// one argument.
func (a Arg) String() string { return strings.Join(a, " ") }

// Key returns the fields joined by NUL bytes: a string that tells
// arguments apart (no field holds a NUL: Split replaces them) and, for a
// one-field argument, the field itself. It is what --shard hashes, so an
// input of one source lands in the same shard it did before arguments had
// fields.
func (a Arg) Key() string { return strings.Join(a, "\x00") }

// ArgSeq is a stream of arguments. A non-nil error ends it.
type ArgSeq = iter.Seq2[Arg, error]

// Source is one input source: the values of one ::: group, one :::: file,
// one -a file or stdin.
type Source struct {
	// Name says where the values come from in errors (":::", "-a FILE");
	// "" for values whose errors say it themselves (Files: "--files
	// PATTERN: ...").
	Name string
	// Values yields the values. Only the first source is read lazily; the
	// others are read whole by Open (see Open).
	Values input.Seq
	// Linked is :::+ or ::::+: the source is paired with the one before
	// it, value by value, instead of being combined with every value of
	// it; the shortest of the linked sources sets their length.
	Linked bool
}

// Options says how Open turns values into arguments.
type Options struct {
	// Link is --link: every source is paired with the others value by
	// value, and shorter sources start over until the longest ends.
	Link bool
	// ColSep is --colsep: every value is split into fields where it
	// matches. Nil keeps one field per value.
	ColSep *regexp.Regexp
	// Header is --header: the first value of every source names its
	// fields (split by ColSep too) and is not an argument. GNU parallel
	// does the same whatever regexp --header is given outside --pipe.
	Header bool
	// Trim is applied to every field.
	Trim Trim
}

// Inputs are the arguments of a run, combined from its sources.
type Inputs struct {
	opts  Options
	names []string
	lazy  Source
	// linked are the sources paired with the first, read whole.
	linked [][]Arg
	// rest are the rows of every later group (its linked sources zipped),
	// read whole.
	rest [][]Arg
	used bool
	// next and stop pull the first source once Open read its header.
	next func() (string, error, bool)
	stop func()
	// restValues is set when a later source has a value: an empty first
	// source is then one empty value (see Open).
	restValues bool
}

// Open combines srcs as GNU parallel does: every value of the first source
// with every value of the second, and so on, the last source varying
// fastest; a Linked source is paired with the one before it instead; with
// Options.Link every source is paired. Each argument's fields are those of
// its sources in order.
//
// The combinations are streamed, never stored: memory holds the values of
// every source but the first, which Open reads whole (so they must be
// finite; GNU parallel too reads them before the first job), and the first
// source is read lazily, one value per argument pulled. With Options.Link,
// the first source's values are kept only while it is shorter than the
// longest source, to start it over. Open returns the first error of reading
// the sources, and one for a Linked first source. Close releases the first
// source when a run does not range over All to its end.
//
// As in GNU parallel, a source with no value (an empty file, a ::: with
// nothing after it, a source that -E ends at once, one holding only its
// --header) is one empty value when another source has a value: `:::: empty
// ::: a b` gives the arguments "" a and "" b, not none. When no source has
// a value there is no argument. With Options.Link an empty source gives no
// argument (GNU parallel 20221122 fails on one).
func Open(srcs []Source, opts Options) (*Inputs, error) {
	in := &Inputs{opts: opts}
	if len(srcs) == 0 {
		return in, nil
	}
	if srcs[0].Linked {
		return nil, fmt.Errorf("%w: %s: :::+ and ::::+ need an input source before them", ErrBadOption, srcs[0].Name)
	}
	in.lazy = srcs[0]
	var names []string
	if opts.Header {
		next, stop := iter.Pull2(srcs[0].Values)
		in.next, in.stop = next, stop
		v, err, ok := next()
		if err != nil {
			stop()
			return nil, srcs[0].named(err)
		}
		if ok {
			names = append(names, in.fields(v)...)
		}
	}
	var groups [][][]Arg
	for _, s := range srcs[1:] {
		rows, hdr, err := in.readAll(s)
		if err != nil {
			in.Close()
			return nil, err
		}
		names = append(names, hdr...)
		if len(rows) > 0 {
			in.restValues = true
		} else if !opts.Link {
			rows = []Arg{in.fields("")}
		}
		switch {
		case opts.Link || (s.Linked && len(groups) == 0):
			in.linked = append(in.linked, rows)
		case s.Linked:
			groups[len(groups)-1] = append(groups[len(groups)-1], rows)
		default:
			groups = append(groups, [][]Arg{rows})
		}
	}
	for _, g := range groups {
		in.rest = append(in.rest, zip(g))
	}
	if opts.Header {
		in.names = names
	}
	return in, nil
}

// zip pairs the rows of linked sources, the shortest setting the length.
func zip(srcs [][]Arg) []Arg {
	n := len(srcs[0])
	for _, s := range srcs {
		n = min(n, len(s))
	}
	out := make([]Arg, n)
	for i := range out {
		var a Arg
		for _, s := range srcs {
			a = append(a, s[i]...)
		}
		out[i] = a
	}
	return out
}

// fields splits one value into its fields.
func (in *Inputs) fields(v string) Arg {
	var fs []string
	if in.opts.ColSep != nil {
		fs = in.opts.ColSep.Split(v, -1)
	} else {
		fs = []string{v}
	}
	if in.opts.Trim != TrimNone {
		for i, f := range fs {
			fs[i] = in.opts.Trim.Apply(f)
		}
	}
	return fs
}

func (in *Inputs) readAll(s Source) (rows []Arg, header []string, err error) {
	first := in.opts.Header
	for v, err := range s.Values {
		if err != nil {
			return nil, nil, s.named(err)
		}
		if first {
			first = false
			header = in.fields(v)
			continue
		}
		rows = append(rows, in.fields(v))
	}
	return rows, header, nil
}

// Names returns the column names read by Options.Header, in field order
// (Names()[i] names field i+1, as template.Options.Names wants), or nil
// without a header.
func (in *Inputs) Names() []string { return in.names }

// Close releases the first source. It is safe to call more than once and
// after All ended.
func (in *Inputs) Close() {
	if in.stop != nil {
		in.stop()
	}
}

// All yields the combined arguments in GNU parallel's order. It reads the
// first source, so it may be ranged over once; a second range yields
// nothing. It ends at the first error of the first source.
func (in *Inputs) All() ArgSeq {
	return func(yield func(Arg, error) bool) {
		if in.used || in.lazy.Values == nil {
			return
		}
		in.used = true
		defer in.Close()
		for _, r := range in.rest {
			if len(r) == 0 {
				return
			}
		}
		maxLinked := 0
		for _, l := range in.linked {
			if len(l) == 0 {
				return
			}
			maxLinked = max(maxLinked, len(l))
		}
		var kept []Arg // the first source's rows, kept to start over (--link)
		i := 0
		emit := func(first Arg) bool {
			row := first
			if len(in.linked) > 0 {
				row = append(Arg(nil), first...)
				for _, l := range in.linked {
					if !in.opts.Link && i >= len(l) {
						return false
					}
					row = append(row, l[i%len(l)]...)
				}
			}
			i++
			return in.product(row, yield)
		}
		for v, err := range in.firstValues() {
			if err != nil {
				yield(nil, in.lazy.named(err))
				return
			}
			row := in.fields(v)
			if in.opts.Link && i < maxLinked {
				kept = append(kept, row)
			}
			if !emit(row) {
				return
			}
		}
		if i == 0 && in.restValues && !in.opts.Link {
			// An empty first source is one empty value (see Open).
			emit(in.fields(""))
			return
		}
		// --link: the first source was the shorter; start it over.
		for n := len(kept); n > 0 && i < maxLinked; {
			if !emit(kept[i%n]) {
				return
			}
		}
	}
}

// firstValues is the first source's values: after its header when Open
// read one (through next), else from its start.
func (in *Inputs) firstValues() input.Seq {
	if in.next == nil {
		return in.lazy.Values
	}
	return func(yield func(string, error) bool) {
		for {
			v, err, ok := in.next()
			if !ok || !yield(v, err) {
				return
			}
		}
	}
}

// product yields row combined with every combination of the later groups,
// the last varying fastest.
func (in *Inputs) product(row Arg, yield func(Arg, error) bool) bool {
	if len(in.rest) == 0 {
		return yield(row, nil)
	}
	idx := make([]int, len(in.rest))
	for {
		a := make(Arg, len(row), len(row)+len(in.rest))
		copy(a, row)
		for g, r := range in.rest {
			a = append(a, r[idx[g]]...)
		}
		if !yield(a, nil) {
			return false
		}
		g := len(idx) - 1
		for ; g >= 0; g-- {
			idx[g]++
			if idx[g] < len(in.rest[g]) {
				break
			}
			idx[g] = 0
		}
		if g < 0 {
			return true
		}
	}
}

// named puts the source's name before err, if it has one.
func (s Source) named(err error) error {
	if s.Name == "" {
		return err
	}
	return fmt.Errorf("%s: %w", s.Name, err)
}
