package runner

import (
	"bytes"
	"io"
)

// parsetWriters are the writers of one attempt of j with --_parset: its
// stdout is held, and done writes its value line to stream, the job's
// own output, so that the run's order is the values' order. stderr stays
// the job's.
func (r *Runner) parsetWriters(j *job, stream io.Writer) (stdout io.Writer, done func()) {
	var buf bytes.Buffer
	return &buf, func() {
		_, _ = io.WriteString(stream, r.cfg.GNU.Exec.Parset.Value(j.it.seq, j.it.fieldList(), buf.Bytes()))
	}
}
