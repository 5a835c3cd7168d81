package gnuinput

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ration-run/ration/runner/input"
)

// robinPoll is how often a RoundRobin waiting for a stream to take a
// block asks whether the run stopped.
const robinPoll = 50 * time.Millisecond

// RoundRobin hands blocks to a fixed set of streams (GNU parallel's
// --pipe --round-robin): each block goes whole to whichever stream is
// ready to take one, that is, has handed on all of the block before. A
// new stream starts only when no running one is ready and fewer than the
// most are running; one whose job ended (Stream's Close) stops taking
// blocks and makes room for a new one. It holds no block itself: a block
// waits in Keys until a stream takes it, so memory is one block per
// stream and one more.
type RoundRobin struct {
	ch   chan string
	quit chan struct{} // closed when Keys returns
	free chan struct{} // a stream ended: room for another

	mu      sync.Mutex
	pending map[string]*Stream // started, not yet taken by Stream
	running int
}

// NewRoundRobin returns a RoundRobin with no streams.
func NewRoundRobin() *RoundRobin {
	return &RoundRobin{ch: make(chan string), quit: make(chan struct{}), free: make(chan struct{}, 1), pending: map[string]*Stream{}}
}

// Keys hands the blocks of blocks to streams, and yields the key of each
// stream it starts (at most most() running at once, at least 1): the
// caller runs a job per key, whose stdin is Stream(key). A block no
// running stream is ready for waits until one is, or one ends, or
// stopped() (asked every 50 ms meanwhile) says the run stopped: then Keys
// ends, as it does when the caller stops it. Once Keys ended, the streams
// end (io.EOF) after the blocks they took. An error of blocks ends Keys
// with it.
func (rr *RoundRobin) Keys(blocks input.Seq, most func() int, stopped func() bool) input.Seq {
	return func(yield func(string, error) bool) {
		defer close(rr.quit)
		n := 0
		for b, err := range blocks {
			if err != nil {
				yield("", err)
				return
			}
			for placed := false; !placed; {
				// A running stream that is ready takes it first; else a
				// new stream, when there is room; else the first stream
				// ready, or room made by one that ended.
				select {
				case rr.ch <- b:
					placed = true
					continue
				default:
				}
				rr.mu.Lock()
				if rr.running < max(most(), 1) {
					n++
					rr.running++
					key := fmt.Sprintf("round-robin stream %d", n)
					s := &Stream{rr: rr, cur: b, stop: make(chan struct{})}
					s.taken.Store(int64(len(b)))
					rr.pending[key] = s
					rr.mu.Unlock()
					if !yield(key, nil) {
						return
					}
					placed = true
					continue
				}
				rr.mu.Unlock()
				sent, ok := rr.send(b, stopped)
				if !ok {
					return
				}
				placed = sent
			}
		}
	}
}

// send hands b to the first running stream ready for it (sent), or
// returns when one ended, making room for another (not sent); ok is false
// when the run stopped first.
func (rr *RoundRobin) send(b string, stopped func() bool) (sent, ok bool) {
	t := time.NewTicker(robinPoll)
	defer t.Stop()
	for {
		select {
		case rr.ch <- b:
			return true, true
		case <-rr.free:
			return false, true
		case <-t.C:
			if stopped() {
				return false, false
			}
		}
	}
}

// Stream is the stream of the job started for key, its stdin; nil when
// key is not one Keys yielded, or was asked for before.
func (rr *RoundRobin) Stream(key string) *Stream {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	s := rr.pending[key]
	delete(rr.pending, key)
	return s
}

// Stream is one job's stdin under RoundRobin: the blocks it took, one
// after the other.
type Stream struct {
	rr   *RoundRobin
	cur  string
	stop chan struct{}
	once sync.Once
	// taken is the bytes of the blocks the stream took.
	taken atomic.Int64
}

// Taken is the bytes of every block the stream took, whether its job read
// them all or not: what GNU parallel's joblog counts as sent (Send).
func (s *Stream) Taken() int64 { return s.taken.Load() }

// Read reads the block taken last, then takes the next one. It returns
// io.EOF once the blocks ended or Close was called.
func (s *Stream) Read(p []byte) (int, error) {
	for s.cur == "" {
		select {
		case <-s.stop:
			return 0, io.EOF
		default:
		}
		select {
		case b := <-s.rr.ch:
			s.cur = b
			s.taken.Add(int64(len(b)))
		case <-s.rr.quit:
			return 0, io.EOF
		case <-s.stop:
			return 0, io.EOF
		}
	}
	n := copy(p, s.cur)
	s.cur = s.cur[n:]
	return n, nil
}

// Close ends the stream (its job ended): it takes no more blocks, and
// makes room for another stream. A block it took and did not hand on is
// lost, as under GNU parallel when a job ends before reading its input.
func (s *Stream) Close() error {
	s.once.Do(func() {
		close(s.stop)
		s.rr.mu.Lock()
		s.rr.running--
		s.rr.mu.Unlock()
		select {
		case s.rr.free <- struct{}{}:
		default:
		}
	})
	return nil
}
