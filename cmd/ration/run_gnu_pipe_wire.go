package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
)

// pipeModeInputs opens the inputs of --pipepart or --round-robin into
// cfg. --pipepart: the file's parts are the jobs, each one's stdin read
// from the file by seeking (cfg.GNU.Stdin); the file stays open until the
// process ends.
func (w *wiring) pipeModeInputs(cfg *runner.Config, stdin io.Reader) error {
	m := w.plan.input.pipeMode
	if m.roundRobin {
		w.roundRobin(cfg, stdin)
		return nil
	}
	fh, err := os.Open(m.path)
	if err != nil {
		return fmt.Errorf("--pipepart: %s: %v", m.path, unwrapPathErr(err))
	}
	st, err := fh.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = errors.New("not a regular file (--pipepart seeks in it; cut a stream with --pipe)")
	}
	if err != nil {
		fh.Close()
		return fmt.Errorf("--pipepart: %s: %v", m.path, err)
	}
	size := st.Size()
	cfg.GNU.Args = func(yield func(input.Arg, error) bool) {
		o := m.part
		if m.perSlot > 0 {
			// GNU parallel: size / job slots / N, plus one.
			o.Size = 1 + size/int64(max(cfg.Jobs, 1))/m.perSlot
		}
		for p, err := range input.SplitFile(fh, size, o) {
			if err != nil {
				yield(nil, fmt.Errorf("--pipepart: %s: %w", m.path, err))
				return
			}
			if !yield(input.Arg{partKey(p)}, nil) {
				return
			}
		}
	}
	cfg.GNU.Stdin = func(key string) (io.Reader, func()) {
		p, err := parsePartKey(key)
		if err != nil {
			// Not one of ours: cannot happen, but never feed a wrong part.
			return errReader{err}, nil
		}
		return p.Reader(fh), nil
	}
	return nil
}

// partKey is a --pipepart job's input, as events and logs show it: the
// part's bytes, and the header's when there is one.
func partKey(p input.Part) string {
	return fmt.Sprintf("bytes %d-%d (header 0-%d)", p.Start, p.End, p.Header)
}

func parsePartKey(s string) (input.Part, error) {
	var p input.Part
	_, err := fmt.Sscanf(s, "bytes %d-%d (header 0-%d)", &p.Start, &p.End, &p.Header)
	return p, err
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// roundRobin sets cfg's inputs for --round-robin: stdin's blocks go to -j
// streams, each one the stdin of a job that runs until the input ends.
func (w *wiring) roundRobin(cfg *runner.Config, stdin io.Reader) {
	rr := input.NewRoundRobin()
	keys := rr.Keys(input.Blocks(stdin, *w.plan.input.pipe),
		func() int { return cfg.Jobs },
		func() bool { return w.runner != nil && w.runner.Stopping() })
	cfg.GNU.Args = func(yield func(input.Arg, error) bool) {
		for k, err := range keys {
			if !yield(input.Arg{k}, err) || err != nil {
				return
			}
		}
	}
	cfg.GNU.Stdin = func(key string) (io.Reader, func()) {
		s := rr.Stream(key)
		if s == nil {
			// Asked twice (a retry, refused by plan): nothing more to give.
			return strings.NewReader(""), nil
		}
		return s, func() { _ = s.Close() }
	}
}
