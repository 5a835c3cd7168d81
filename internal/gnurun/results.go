package gnurun

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/joblog"
)

// execState is what a run keeps for GNUExec.
type execState struct {
	// results is --results with replacement strings, parsed once; nil
	// when GNU.Results holds none (GNU parallel's directory layout).
	resultsOnce sync.Once
	results     *template.Template
	resultsErr  error

	// table is the --results NAME.csv table.
	table resultsTable
	// gate is StartGate's state.
	gate gateState
}

// resultsTemplate parses GNU.Results as a one-word template, once.
func (r *state) resultsTemplate() (*template.Template, error) {
	x := &r.exec
	x.resultsOnce.Do(func() {
		o := r.g.Template
		o.Shell, o.Context = false, false
		t, err := template.ParseOptions([]string{r.g.Results}, o)
		if err != nil {
			x.resultsErr = fmt.Errorf("--results: %w", err)
			return
		}
		x.results = t
	})
	return x.results, x.resultsErr
}

// resultsFiles opens the --results files of the job of it in slot, as
// GNU parallel names them: GNU.Results expanded, when it holds
// replacement strings, is the stdout file, with NAME.err and NAME.seq
// beside it, or, ending in /, the directory of stdout, stderr and seq;
// else DIR/1/ARG/.../ (resultsDir). The seq file holds the job's number.
func (r *state) resultsFiles(it runhook.Item, slot int) ([2]*os.File, error) {
	var files [2]*os.File
	t, err := r.resultsTemplate()
	if err != nil {
		return files, err
	}
	if !t.HasInput() {
		return openResults(r.g.Results, it, r.g.Template.Names)
	}
	out := strings.Join(t.ExpandFields(it.FieldList(), it.Seq, slot), " ")
	names := [3]string{out, out + ".err", out + ".seq"}
	dir := filepath.Dir(out)
	if strings.HasSuffix(out, "/") {
		dir = out
		names = [3]string{filepath.Join(out, "stdout"), filepath.Join(out, "stderr"), filepath.Join(out, "seq")}
	}
	return gnu.CreateResults(dir, names, it.Seq)
}

// resultsTable writes --results NAME.csv (or .tsv): a header, then one
// row per job that ended, as GNU parallel 20221122 writes them.
type resultsTable struct {
	mu      sync.Mutex
	started bool
	// outs are the output of the running attempts, by job number.
	outs map[int64]*[2]lockedBuffer
}

// lockedBuffer is a job's stdout or stderr held for its row.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tableWriters are the writers of one attempt of j with --results
// NAME.csv: its stdout and stderr are held for its row, an earlier
// attempt's dropped.
func (r *state) tableWriters(j runhook.Job) (stdout, stderr io.Writer) {
	t := &r.exec.table
	bufs := &[2]lockedBuffer{}
	t.mu.Lock()
	if t.outs == nil {
		t.outs = map[int64]*[2]lockedBuffer{}
	}
	t.outs[j.Item().Seq] = bufs
	t.mu.Unlock()
	return &bufs[0], &bufs[1]
}

// tableRow writes the row of ended job j to --results NAME.csv: Seq, Host,
// Starttime, JobRuntime, Send, Receive (as in the joblog), Exitval, Signal,
// Command, the job's values V1..Vn (or the --header names), Stdout,
// Stderr. The first row truncates the file and writes the header. The
// row holds the job's output: a failed write (a full disk) is cut back, so
// that no torn row is left, and returned wrapping runner.ErrOutputGone: the job's
// output was lost, and the run stops (runner.Runner's record).
func (r *state) tableRow(j runhook.Job, e joblog.Entry) error {
	x := &r.g.Exec
	if x.ResultsTable == "" {
		return nil
	}
	t := &r.exec.table
	t.mu.Lock()
	defer t.mu.Unlock()
	bufs := t.outs[j.Item().Seq]
	delete(t.outs, j.Item().Seq)
	if bufs == nil {
		bufs = &[2]lockedBuffer{}
	}
	stdout, stderr := bufs[0].String(), bufs[1].String()
	sep := x.tableSep()
	var b strings.Builder
	flag := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	vals := j.Item().FieldList()
	if !t.started {
		flag |= os.O_TRUNC
		head := []string{"Seq", "Host", "Starttime", "JobRuntime", "Send", "Receive", "Exitval", "Signal", "Command"}
		names := r.g.Template.Names
		for i := range vals {
			if i < len(names) && names[i] != "" {
				head = append(head, names[i])
			} else {
				head = append(head, "V"+strconv.Itoa(i+1))
			}
		}
		gnu.WriteRow(&b, sep, append(head, "Stdout", "Stderr"))
	}
	row := []string{strconv.FormatInt(e.Seq, 10), ":", gnu.EpochMillis(e.Start.UnixMilli()), gnu.EpochMillis(e.Runtime.Milliseconds()),
		strconv.FormatInt(e.Send, 10), strconv.FormatInt(e.Receive, 10), strconv.Itoa(e.Exitval), strconv.Itoa(e.Signal), e.Command}
	row = append(append(row, vals...), stdout, stderr)
	gnu.WriteRow(&b, sep, row)
	if err := gnu.AppendRows(x.ResultsTable, flag, b.String()); err != nil {
		return fmt.Errorf("%w: --results %s: %w", runner.ErrOutputGone, x.ResultsTable, err)
	}
	t.started = true
	return nil
}

// tableSep is the column separator of ResultsTable: a tab for .tsv, else
// a comma.
func (x *GNUExec) tableSep() byte {
	if strings.HasSuffix(strings.ToLower(x.ResultsTable), ".tsv") {
		return '\t'
	}
	return ','
}
