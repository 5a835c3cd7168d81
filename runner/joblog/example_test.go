package joblog_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/ration-run/ration/runner/joblog"
)

// The order a resumable run uses: check the inputs before anything is
// opened, open (lock, check again, repair, read the record), skip what the
// record holds, and fail the run on any Write or Close error.
func Example_resume() {
	dir, _ := os.MkdirTemp("", "joblog-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "joblog")
	inputs := []string{filepath.Join(dir, "inputs")}
	os.WriteFile(inputs[0], []byte("a\nb\nc\n"), 0o644)
	// A run that died while writing job 2's record.
	os.WriteFile(path, []byte(joblog.Header+"\n1\t:\t1.000\t     0.100\t0\t0\t0\t0\techo a\n2\t:\t1.0"), 0o644)

	if err := joblog.CheckNotInput(path, inputs); err != nil {
		log.Fatal(err)
	}
	w, err := joblog.Open(path, joblog.Options{Resume: true, Inputs: inputs})
	if errors.Is(err, joblog.ErrLocked) || errors.Is(err, joblog.ErrSameFile) {
		log.Fatal(err)
	}
	if err != nil {
		log.Fatal(err)
	}
	if t := w.Torn(); t != nil {
		fmt.Println("repaired: line", t.Line, "cut off,", t.Size, "bytes")
	}
	for seq, cmd := range []string{"echo a", "echo b", "echo c"} {
		if w.Record().Ended(int64(seq + 1)) {
			continue
		}
		e := joblog.Entry{Seq: int64(seq + 1), Start: time.Unix(2, 0), Command: cmd}
		e.Exitval, e.Signal = joblog.ExitColumns(0, 0, false)
		if err := w.Write(e); err != nil {
			log.Fatal(err) // the job is not recorded: stop, say which, exit non-zero
		}
		fmt.Println("ran job", seq+1)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// repaired: line 3 cut off, 7 bytes
	// ran job 2
	// ran job 3
}
