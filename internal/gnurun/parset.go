package gnurun

import (
	"bytes"
	"io"

	"github.com/ration-run/ration/internal/runhook"
)

// parsetWriters are the writers of one attempt of j with --_parset: its
// stdout is held, and done writes its value line to stream, the job's
// own output, so that the run's order is the values' order. stderr stays
// the job's.
func (r *state) parsetWriters(j runhook.Job, stream io.Writer) (stdout io.Writer, done func()) {
	var buf bytes.Buffer
	return &buf, func() {
		_, _ = io.WriteString(stream, r.g.Exec.Parset.Value(j.Item().Seq, j.Item().FieldList(), buf.Bytes()))
	}
}
