package gnurun

import (
	"fmt"
	"io"
	"os"

	"github.com/ration-run/ration/internal/runhook"
)

// filesWriters are the writers of one attempt of j with --files: its
// stdout goes to a new file parXXXX.par in GNUExec.TmpDir, kept, and
// stderr nowhere, as GNU parallel does; done closes the file and writes
// its name, after the job's --tag, to stream, the job's own output, so
// that -k orders the names as it would the output. A file that cannot be
// made is an error (attemptWriters): the attempt fails without running.
func (r *state) filesWriters(j runhook.Job, stream io.Writer) (stdout, stderr io.Writer, done func(), err error) {
	f, err := os.CreateTemp(r.g.Exec.TmpDir, "par*.par")
	if err != nil {
		return stream, j.Stream(true), func() {}, fmt.Errorf("--files: %w", err)
	}
	return f, io.Discard, func() {
		if err := f.Close(); err != nil {
			fmt.Fprintf(j.Stream(true), "ration: --files: %v\n", err)
		}
		line := f.Name() + "\n"
		if tag, ok := r.tagOf(j.Item(), j.Slot()); ok {
			line = string(tag) + line
		}
		_, _ = io.WriteString(stream, line)
	}, nil
}
