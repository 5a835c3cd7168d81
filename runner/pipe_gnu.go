package runner

import (
	"io"
	"strings"
)

// pipeStdin is the stdin of a --pipe job whose input is input, and what
// to call once its attempt ended; an error means the job's input could
// not be given (GNUOptions.Stdin): the attempt must not run.
func (r *Runner) pipeStdin(input string) (io.Reader, func(), error) {
	if r.cfg.GNU.Stdin == nil {
		return strings.NewReader(input), func() {}, nil
	}
	in, done, err := r.cfg.GNU.Stdin(input)
	if done == nil {
		done = func() {}
	}
	return in, done, err
}

// Stopping reports whether the run stopped taking inputs (a halt, a
// signal, ration's output gone): for an input source that waits on the
// jobs themselves (--round-robin), which must not wait on after it.
func (r *Runner) Stopping() bool { return r.stopping.Load() }
