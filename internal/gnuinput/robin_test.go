package gnuinput

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/input"
)

// robinBlocks yields n blocks "b<i>\n".
func robinBlocks(n int) input.Seq {
	return func(yield func(string, error) bool) {
		for i := range n {
			if !yield(fmt.Sprintf("b%d\n", i), nil) {
				return
			}
		}
	}
}

// TestRoundRobinEveryBlockOnce: every block reaches exactly one stream,
// whole, and no more than most streams start while none ends early.
func TestRoundRobinEveryBlockOnce(t *testing.T) {
	for _, most := range []int{1, 3} {
		t.Run(fmt.Sprint(most), func(t *testing.T) {
			rr := NewRoundRobin()
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				got  []string
				keys int
			)
			for key, err := range rr.Keys(robinBlocks(200), func() int { return most }, func() bool { return false }) {
				if err != nil {
					t.Fatal(err)
				}
				keys++
				s := rr.Stream(key)
				if s == nil || rr.Stream(key) != nil {
					t.Fatalf("Stream(%q) is not one stream", key)
				}
				wg.Go(func() {
					defer s.Close()
					// Reads of 3 bytes: a block is handed on in pieces.
					var b []byte
					buf := make([]byte, 3)
					for {
						n, err := s.Read(buf)
						b = append(b, buf[:n]...)
						if err == io.EOF {
							break
						}
					}
					mu.Lock()
					got = append(got, strings.SplitAfter(string(b), "\n")...)
					mu.Unlock()
				})
			}
			wg.Wait()
			got = slices.DeleteFunc(got, func(s string) bool { return s == "" })
			slices.Sort(got)
			var want []string
			for b := range robinBlocks(200) {
				want = append(want, b)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got %d blocks, want the 200 blocks once each", len(got))
			}
			if keys < 1 || keys > most {
				t.Errorf("%d streams, want 1 to %d", keys, most)
			}
		})
	}
}

// TestRoundRobinEndedStreamMakesRoom: a stream whose job ended takes no
// more blocks, and a new one starts for the blocks left.
func TestRoundRobinEndedStreamMakesRoom(t *testing.T) {
	rr := NewRoundRobin()
	var keys []string
	for key, err := range rr.Keys(robinBlocks(5), func() int { return 1 }, func() bool { return false }) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key)
		s := rr.Stream(key)
		if len(keys) == 1 {
			// The first job reads one block and ends.
			go func() {
				buf := make([]byte, 3)
				_, _ = io.ReadFull(s, buf)
				s.Close()
			}()
			continue
		}
		go func() {
			defer s.Close()
			_, _ = io.Copy(io.Discard, s)
		}()
	}
	if len(keys) != 2 {
		t.Fatalf("streams %q, want 2", keys)
	}
}

// TestRoundRobinStops: Keys waiting for a stream ends once stopped says
// so, and the streams then end.
func TestRoundRobinStops(t *testing.T) {
	rr := NewRoundRobin()
	var stop atomic.Bool
	done := make(chan []string)
	go func() {
		var keys []string
		for key, err := range rr.Keys(robinBlocks(10), func() int { return 1 }, stop.Load) {
			if err != nil {
				t.Error(err)
			}
			keys = append(keys, key) // its stream is never read
		}
		done <- keys
	}()
	time.Sleep(100 * time.Millisecond)
	stop.Store(true)
	select {
	case keys := <-done:
		if len(keys) != 1 {
			t.Errorf("streams %q, want 1", keys)
		}
		s := rr.Stream(keys[0])
		b, err := io.ReadAll(s)
		if string(b) != "b0\n" || err != nil {
			t.Errorf("the stream gives %q, %v after the end; want its block", b, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Keys did not end")
	}
}
