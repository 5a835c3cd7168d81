package gnurun

import (
	"io"
	"strings"
)

// pipeStdin is the stdin of a --pipe job whose input is input, and what
// to call once its attempt ended; an error means the job's input could
// not be given (GNU.Stdin): the attempt must not run.
func (r *state) pipeStdin(input string) (io.Reader, func(), error) {
	if r.g.Stdin == nil {
		return strings.NewReader(input), func() {}, nil
	}
	in, done, err := r.g.Stdin(input)
	if done == nil {
		done = func() {}
	}
	return in, done, err
}
