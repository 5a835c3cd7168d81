package runner

import (
	"io"
	"strings"
)

// pipeStdin is the stdin of a --pipe job whose input is input, and what
// to call once its attempt ended.
func (r *Runner) pipeStdin(input string) (io.Reader, func()) {
	if r.cfg.GNU.Stdin == nil {
		return strings.NewReader(input), func() {}
	}
	in, done := r.cfg.GNU.Stdin(input)
	if done == nil {
		done = func() {}
	}
	return in, done
}
