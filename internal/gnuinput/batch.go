package gnuinput

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

// batcher is the state of one Batches stream.
type batcher struct {
	opts    BatchOptions
	yield   func(Batch, error) bool
	maxArgs int
	seq     int64
	cur     []numbered
	spread  bool // the last arguments are still to be spread
	stopped bool // the consumer stopped, or an error was yielded
}

// emit yields the batch b.
func (bt *batcher) emit(b []numbered) bool {
	bt.seq++
	out := Batch{Seq: bt.seq, First: b[0].n, Args: make([]Arg, len(b))}
	for i, x := range b {
		out.Args[i] = x.a
	}
	if !bt.yield(out, nil) {
		bt.stopped = true
		return false
	}
	return true
}

// flush emits the current batch; queueEmpty says no argument is left
// after it, which is when GNU parallel spreads the arguments over the job
// slots (once: the batches after keep that size).
func (bt *batcher) flush(queueEmpty bool) bool {
	b := bt.cur
	bt.cur = nil
	if bt.opts.Measure != nil {
		bt.opts.Measure.Reset()
	}
	if len(b) == 0 {
		return true
	}
	if !bt.spread || !queueEmpty || len(b) == 1 {
		if bt.spread && queueEmpty {
			bt.spread = false
		}
		return bt.emit(b)
	}
	bt.spread = false
	k := (len(b) + bt.opts.Spread - 1) / bt.opts.Spread
	bt.maxArgs = k
	for len(b) > 0 {
		n := min(k, len(b))
		if !bt.emit(b[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}

// add adds x to the current batch, emitting the batch before it when x
// does not fit; last says no argument follows x.
func (bt *batcher) add(x numbered, last bool) bool {
	bt.cur = append(bt.cur, x)
	if bt.opts.MaxChars > 0 {
		if l := bt.opts.Measure.Add(x.a); l >= bt.opts.MaxChars {
			if len(bt.cur) == 1 {
				s := x.a.String()
				if len(s) > 50 {
					s = s[:50] + "..."
				}
				bt.yield(Batch{}, fmt.Errorf("%w (%d >= %d) at input %d: %s", ErrTooLong, l, bt.opts.MaxChars, x.n, s))
				bt.stopped = true
				return false
			}
			bt.cur = bt.cur[:len(bt.cur)-1]
			if !bt.flush(false) {
				return false
			}
			return bt.add(x, last)
		}
	}
	if bt.maxArgs > 0 && len(bt.cur) >= bt.maxArgs {
		return bt.flush(last)
	}
	return true
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
		bt := &batcher{opts: opts, yield: yield, maxArgs: opts.MaxArgs, spread: opts.Spread > 0}
		if bt.maxArgs <= 0 && opts.MaxChars <= 0 {
			bt.maxArgs = 1
		}
		// With Spread, one argument is held back to know whether it is
		// the last.
		var held *numbered
		var n int64
		for a, err := range args {
			if err != nil {
				if held != nil && !bt.add(*held, true) {
					return
				}
				if bt.flush(true) {
					yield(Batch{}, err)
				}
				return
			}
			n++
			if opts.Keep != nil && !opts.Keep(a) {
				continue
			}
			x := numbered{n, a}
			if !bt.spread {
				// (Spreading ends only at the end of the input.)
				if !bt.add(x, false) {
					return
				}
				continue
			}
			if held != nil && !bt.add(*held, false) {
				return
			}
			held = &x
		}
		if held != nil && !bt.add(*held, true) {
			return
		}
		if !bt.stopped {
			bt.flush(true)
		}
	}
}
