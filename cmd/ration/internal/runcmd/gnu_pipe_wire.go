package runcmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/runner"
)

// partKey is a --pipepart job's input, as events and logs show it: the
// part's bytes, and the header's when there is one.
func partKey(p gnuinput.Part) string {
	return fmt.Sprintf("bytes %d-%d (header 0-%d)", p.Start, p.End, p.Header)
}

func parsePartKey(s string) (gnuinput.Part, error) {
	var p gnuinput.Part
	_, err := fmt.Sscanf(s, "bytes %d-%d (header 0-%d)", &p.Start, &p.End, &p.Header)
	return p, err
}

// roundRobin sets cfg's inputs for --round-robin: stdin's blocks go to -j
// streams, each one the stdin of a job that runs until the input ends.
func (w *wiring) roundRobin(cfg *runConfig, stdin io.Reader) {
	rr := gnuinput.NewRoundRobin()
	keys := rr.Keys(gnuinput.Blocks(stdin, *w.plan.input.pipe),
		func() int { return cfg.Jobs },
		func() bool { return w.runner != nil && w.runner.Stopping() })
	cfg.GNU.Args = func(yield func(gnuinput.Arg, error) bool) {
		for k, err := range keys {
			if !yield(gnuinput.Arg{k}, err) || err != nil {
				return
			}
		}
	}
	var streams sync.Map // key -> *gnuinput.Stream, until SendSize
	cfg.GNU.Stdin = func(key string) (io.Reader, func(), error) {
		s := rr.Stream(key)
		if s == nil {
			// Asked twice (a retry, refused by plan): nothing more to give.
			return strings.NewReader(""), nil, nil
		}
		streams.Store(key, s)
		return s, func() { _ = s.Close() }, nil
	}
	cfg.GNU.SendSize = func(key string) int64 {
		if s, ok := streams.LoadAndDelete(key); ok {
			return s.(*gnuinput.Stream).Taken()
		}
		return 0
	}
}

// pipeFiles are the temporary files (--cat) or FIFOs (--fifo) that hold
// the jobs' blocks under names {} is, in --tmpdir (else $TMPDIR), as GNU
// parallel's: a name is made when the job is read, the file when its
// attempt starts (so only the jobs running have one on disk), and it is
// removed when the attempt ends.
type pipeFiles struct {
	fifo  bool
	dir   string
	shard runner.Shard
	n     atomic.Int64
	mu    sync.Mutex
	// content is what each name not yet made holds.
	content map[string]func() io.Reader
	// size is the joblog's Send of each name not yet recorded (sendSize),
	// when not 0.
	size map[string]int64
}

func newPipeFiles(fifo bool, dir string, shard runner.Shard) *pipeFiles {
	if dir == "" {
		dir = os.TempDir()
	}
	return &pipeFiles{fifo: fifo, dir: dir, shard: shard, content: map[string]func() io.Reader{}, size: map[string]int64{}}
}

// add names a file that will hold what content returns, size bytes sent
// to its job as the joblog counts them. key is what --shard hashes
// (inShard): the block itself, or the part's byte range, as without
// --cat and --fifo; a block of another shard is only named.
func (pf *pipeFiles) add(size int64, key string, content func() io.Reader) string {
	name := filepath.Join(pf.dir, fmt.Sprintf("ration-pipe-%d-%d", os.Getpid(), pf.n.Add(1)))
	if !pf.shard.Contains(key) {
		return name
	}
	pf.mu.Lock()
	pf.content[name] = content
	if size != 0 {
		pf.size[name] = size
	}
	pf.mu.Unlock()
	return name
}

// inShard is gnurun.GNU.InShard: whether the block of a name add made is
// this run's shard's.
func (pf *pipeFiles) inShard(a gnuinput.Arg) bool {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	_, ok := pf.content[a.Key()]
	return ok
}

// sendSize is gnurun.GNU.SendSize: the size add was given for name,
// asked once, when its job is recorded.
func (pf *pipeFiles) sendSize(name string) int64 {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	n := pf.size[name]
	delete(pf.size, name)
	return n
}

// stdin is gnurun.GNU.Stdin: it makes the file named name (the job's
// input) and returns no stdin, and what removes the file. A file that
// cannot be made or written whole (a full disk) is an error: the job
// must not run on part of its block.
func (pf *pipeFiles) stdin(name string) (io.Reader, func(), error) {
	pf.mu.Lock()
	content := pf.content[name]
	delete(pf.content, name)
	pf.mu.Unlock()
	if content == nil {
		return nil, nil, nil
	}
	if pf.fifo {
		end, err := pf.makeFIFO(name, content())
		return nil, end, err
	}
	remove := func() { _ = os.Remove(name) }
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--cat: %w", err)
	}
	_, err = io.Copy(f, content())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, remove, fmt.Errorf("--cat: %w", err)
	}
	return nil, remove, nil
}
