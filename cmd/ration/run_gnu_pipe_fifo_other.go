//go:build !unix

package main

import (
	"errors"
	"io"
)

// makeFIFO: there are no named pipes to make here; the job finds no file.
func (pf *pipeFiles) makeFIFO(string, io.Reader) func() {
	pf.warn(errors.New("--fifo: named pipes need a Unix system; use --cat"))
	return func() {}
}
