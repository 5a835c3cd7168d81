package runcmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ration-run/ration/internal/gnuinput"
)

// pipeModeInputs opens the inputs of --pipepart or --round-robin into
// cfg. --pipepart: the file's parts are the jobs, each one's stdin read
// from the file by seeking (cfg.GNU.Stdin); the file stays open until the
// process ends.
func (w *wiring) pipeModeInputs(cfg *runConfig, stdin io.Reader) error {
	m := w.plan.input.pipeMode
	var files *pipeFiles
	if m.file != "" {
		files = newPipeFiles(m.file == "fifo", cfg.GNU.Exec.TmpDir, cfg.Shard)
		cfg.GNU.Stdin, cfg.GNU.SendSize, cfg.GNU.InShard = files.stdin, files.sendSize, files.inShard
	}
	switch {
	case m.roundRobin:
		w.roundRobin(cfg, stdin)
		return nil
	case m.path == "":
		// --pipe with --cat or --fifo.
		blocks := gnuinput.Blocks(stdin, *w.plan.input.pipe)
		cfg.GNU.Args = func(yield func(gnuinput.Arg, error) bool) {
			for b, err := range blocks {
				if err != nil {
					yield(nil, err)
					return
				}
				if !yield(gnuinput.Arg{files.add(int64(len(b)), b, func() io.Reader { return strings.NewReader(b) })}, nil) {
					return
				}
			}
		}
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
	cfg.GNU.Args = func(yield func(gnuinput.Arg, error) bool) {
		o := m.part
		if m.perSlot > 0 {
			// GNU parallel: size / job slots / N, plus one.
			o.Size = 1 + size/int64(max(cfg.Jobs, 1))/m.perSlot
		}
		for p, err := range gnuinput.SplitFile(fh, size, o) {
			if err != nil {
				yield(nil, fmt.Errorf("--pipepart: %s: %w", m.path, err))
				return
			}
			key := partKey(p)
			if files != nil {
				// Send 0: GNU parallel counts no bytes sent to a part.
				key = files.add(0, key, func() io.Reader { return p.Reader(fh) })
			}
			if !yield(gnuinput.Arg{key}, nil) {
				return
			}
		}
	}
	if files != nil {
		return nil
	}
	cfg.GNU.Stdin = func(key string) (io.Reader, func(), error) {
		p, err := parsePartKey(key)
		if err != nil {
			// Not one of ours: cannot happen, but never feed a wrong part.
			return nil, nil, err
		}
		return p.Reader(fh), nil, nil
	}
	return nil
}
