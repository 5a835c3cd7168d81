package input

import (
	"errors"
	"fmt"
	"iter"
)

// ErrTooLong is wrapped by the error Batches yields for an argument that
// alone makes the command line reach BatchOptions.MaxChars.
var ErrTooLong = errors.New("command line too long")

// Measurer measures a command line while arguments are added to it;
// template.Measurer is the one that measures as GNU parallel does.
type Measurer interface {
	// Reset forgets the arguments added.
	Reset()
	// Add adds one argument's fields and returns the line's length.
	Add(fields []string) int
}

// BatchOptions says how many arguments a job takes.
type BatchOptions struct {
	// MaxArgs is -n, -N, -L or --max-args: at most this many arguments
	// per batch; 0 means no limit but MaxChars. When both are 0, every
	// batch holds one argument (GNU parallel's default, -n 1).
	MaxArgs int
	// MaxChars is -s (and the limit of -X, -m, --xargs): a batch's command
	// line, as Measure measures it, stays shorter than MaxChars, as in GNU
	// parallel (a line of exactly MaxChars is too long). 0 means no limit.
	// DefaultMaxChars is GNU parallel's default.
	MaxChars int
	// Measure measures the command lines; required with MaxChars.
	Measure Measurer
	// Spread is the number of job slots for -X and -m: the arguments left
	// when the input ends are spread evenly over that many jobs instead of
	// filling the first, once, as GNU parallel does (so 10 arguments over
	// 4 slots make batches of 3, 3, 3 and 1). 0 fills every batch.
	Spread int
	// Keep, when not nil, selects the arguments to batch (--shard); the
	// others are dropped before batching, so a shard's batches hold only
	// its own arguments and shards stay disjoint whatever the batch
	// sizes. Keep is called on the consumer's goroutine.
	Keep func(Arg) bool
}

// Batch is the arguments of one job.
type Batch struct {
	// Seq numbers the batches of a stream from 1, in order. The same
	// input, BatchOptions and shard make the same batches, so Seq
	// identifies a job for the joblog and --resume as the input number
	// did: with one argument per batch and no Keep, Seq is the input
	// number.
	Seq int64
	// First is the input number (from 1, before Keep) of the first
	// argument of the batch.
	First int64
	// Args are the arguments; never empty.
	Args []Arg
}

// Fields returns the fields of every argument in order: the flat list that
// template.ExpandFields takes.
func (b Batch) Fields() []string {
	if len(b.Args) == 1 {
		return b.Args[0]
	}
	var fs []string
	for _, a := range b.Args {
		fs = append(fs, a...)
	}
	return fs
}

type numbered struct {
	n int64
	a Arg
}

// Batches groups the arguments of args into jobs as opts says, lazily: a
// batch is yielded as soon as it is full, or, with Spread, once the
// argument after it was read (to know whether the input ended). An error
// of args is yielded after the batch of the arguments before it; an
// argument too long to fit a line alone yields an error wrapping
// ErrTooLong (it names the input number and the first 50 bytes). Both end
// the stream.
func Batches(args ArgSeq, opts BatchOptions) iter.Seq2[Batch, error] {
	return func(yield func(Batch, error) bool) {
		if opts.MaxChars > 0 && opts.Measure == nil {
			yield(Batch{}, fmt.Errorf("%w: BatchOptions.MaxChars without Measure", ErrBadOption))
			return
		}
		maxArgs := opts.MaxArgs
		if maxArgs <= 0 && opts.MaxChars <= 0 {
			maxArgs = 1
		}
		var (
			seq     int64
			cur     []numbered
			spread  = opts.Spread > 0
			held    *numbered // read ahead to know whether the input ended
			stopped bool
		)
		emit := func(b []numbered) bool {
			seq++
			out := Batch{Seq: seq, First: b[0].n, Args: make([]Arg, len(b))}
			for i, x := range b {
				out.Args[i] = x.a
			}
			if !yield(out, nil) {
				stopped = true
				return false
			}
			return true
		}
		// flush emits cur; queueEmpty says no argument is left after it,
		// which is when GNU parallel spreads.
		flush := func(queueEmpty bool) bool {
			b := cur
			cur = nil
			if opts.Measure != nil {
				opts.Measure.Reset()
			}
			if len(b) == 0 {
				return true
			}
			if spread && queueEmpty {
				spread = false
				if n := len(b); n > 1 {
					k := (n + opts.Spread - 1) / opts.Spread
					maxArgs = k
					for len(b) > 0 {
						if !emit(b[:min(k, len(b))]) {
							return false
						}
						b = b[min(k, len(b)):]
					}
					return true
				}
			}
			return emit(b)
		}
		// add adds x; last says no argument follows it.
		var add func(x numbered, last bool) bool
		add = func(x numbered, last bool) bool {
			cur = append(cur, x)
			if opts.MaxChars > 0 {
				if l := opts.Measure.Add(x.a); l >= opts.MaxChars {
					if len(cur) == 1 {
						s := x.a.String()
						if len(s) > 50 {
							s = s[:50] + "..."
						}
						yield(Batch{}, fmt.Errorf("%w (%d >= %d) at input %d: %s", ErrTooLong, l, opts.MaxChars, x.n, s))
						stopped = true
						return false
					}
					cur = cur[:len(cur)-1]
					if !flush(false) {
						return false
					}
					return add(x, last)
				}
			}
			if maxArgs > 0 && len(cur) >= maxArgs {
				return flush(last)
			}
			return true
		}
		var n int64
		for a, err := range args {
			if err != nil {
				if held != nil && !add(*held, true) {
					return
				}
				if flush(true) {
					yield(Batch{}, err)
				}
				return
			}
			n++
			if opts.Keep != nil && !opts.Keep(a) {
				continue
			}
			x := numbered{n, a}
			if !spread {
				if !add(x, false) {
					return
				}
				continue
			}
			if held != nil && !add(*held, false) {
				return
			}
			held = &x
		}
		if held != nil && !add(*held, true) {
			return
		}
		if !stopped {
			flush(true)
		}
	}
}
