//go:build !unix

package runcmd

import (
	"errors"
	"io"
)

// makeFIFO: there are no named pipes to make here; the job fails.
func (pf *pipeFiles) makeFIFO(string, io.Reader) (func(), error) {
	return nil, errors.New("--fifo: named pipes need a Unix system; use --cat")
}
