package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
)

// pipeModeInputs opens the inputs of --pipepart into cfg: the file's parts
// are the jobs, each one's stdin read from the file by seeking
// (cfg.GNU.Stdin). The file stays open until the process ends.
func (w *wiring) pipeModeInputs(cfg *runner.Config, _ io.Reader) error {
	m := w.plan.input.pipeMode
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
