// Package joblog reads and writes job logs in GNU parallel's tab-separated
// --joblog format, so that ration's logs resume GNU parallel's runs and the
// other way round, and `ration report` draws either.
//
// The format is a header line and one line per finished job:
//
//	Seq	Host	Starttime	JobRuntime	Send	Receive	Exitval	Signal	Command
//	1	:	1795216618.196	     0.000	0	2	0	0	echo 0
//
// Starttime is seconds since the Unix epoch with three decimals, JobRuntime
// is seconds right-aligned in ten columns with three decimals, as GNU
// parallel writes them. Host is ":" for the local machine.
//
// A job's line is written with one write call when the job ends, so a run
// killed at any moment leaves only whole lines of finished jobs, and a
// --resume finds exactly the jobs that ended.
package joblog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Header is the first line of a joblog, without its newline.
const Header = "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand"

// MaxSeq is the largest job number a joblog may hold. It bounds the memory a
// Record of a hostile or corrupt log can take (256 MiB of bits).
const MaxSeq = 1<<31 - 1

// LocalHost is the Host column GNU parallel writes for jobs run locally.
const LocalHost = ":"

// Entry is one finished job.
type Entry struct {
	Seq     int64         // job number, 1-based in input order
	Host    string        // ":" for local jobs
	Start   time.Time     // when the job started
	Runtime time.Duration // how long it ran
	Send    int64         // bytes sent to the job's stdin
	Receive int64         // bytes the job wrote to stdout and stderr
	Exitval int           // exit status; GNU parallel writes -1 for some killed jobs
	Signal  int           // signal that ended the job, 0 if none
	Command string        // the command as a shell would read it (display only)
}

// Succeeded reports whether the job exited 0 and was not killed.
func (e Entry) Succeeded() bool { return e.Exitval == 0 && e.Signal == 0 }

// ErrMalformed is wrapped by the errors that Entries yields for lines that
// are not joblog lines.
var ErrMalformed = errors.New("malformed joblog line")

// line formats e as one joblog line with its newline. Tabs and newlines in
// the command would break the format, so they are written as \t and \n.
func (e Entry) line() string {
	host := e.Host
	if host == "" {
		host = LocalHost
	}
	ms := max(e.Start.UnixMilli(), 0) // the format has no sign for times before 1970
	cmd := strings.NewReplacer("\t", `\t`, "\n", `\n`, "\r", `\r`).Replace(e.Command)
	return fmt.Sprintf("%d\t%s\t%d.%03d\t%10.3f\t%d\t%d\t%d\t%d\t%s\n",
		e.Seq, host, ms/1000, ms%1000, e.Runtime.Seconds(), e.Send, e.Receive, e.Exitval, e.Signal, cmd)
}

// Writer appends entries to a joblog. It is safe for concurrent use.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
	c  io.Closer
}

// NewWriter returns a Writer that writes lines to w. It writes no header;
// call WriteHeader for a new log.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Create opens the joblog at path. With appendExisting (--resume) and an
// existing non-empty file it appends to it; otherwise it truncates or creates
// the file and writes the header.
func Create(path string, appendExisting bool) (*Writer, error) {
	if appendExisting {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return nil, fmt.Errorf("joblog: %w", err)
			}
			return &Writer{w: f, c: f}, nil
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("joblog: %w", err)
	}
	w := &Writer{w: f, c: f}
	if err := w.WriteHeader(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// WriteHeader writes the header line.
func (w *Writer) WriteHeader() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := io.WriteString(w.w, Header+"\n"); err != nil {
		return fmt.Errorf("joblog: write header: %w", err)
	}
	return nil
}

// Write appends e as one line, with a single write call.
func (w *Writer) Write(e Entry) error {
	line := e.line()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := io.WriteString(w.w, line); err != nil {
		return fmt.Errorf("joblog: write job %d: %w", e.Seq, err)
	}
	return nil
}

// Close closes the file opened by Create. It is a no-op for NewWriter.
func (w *Writer) Close() error {
	if w.c == nil {
		return nil
	}
	return w.c.Close()
}

// Entries yields the entries of a joblog in file order. Header lines (also
// repeated ones, as concatenated logs have) and empty lines are skipped. A
// malformed line yields an error wrapping ErrMalformed with its line number,
// and reading goes on; an I/O error is yielded last.
func Entries(r io.Reader) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
		n := 0
		for sc.Scan() {
			n++
			text := strings.TrimRight(sc.Text(), "\r")
			if text == "" || strings.HasPrefix(text, "Seq\t") {
				continue
			}
			e, err := ParseLine(text)
			if err != nil {
				err = fmt.Errorf("line %d: %w", n, err)
			}
			if !yield(e, err) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(Entry{}, fmt.Errorf("joblog: %w", err))
		}
	}
}

// ParseLine parses one joblog line without its newline.
func ParseLine(line string) (Entry, error) {
	f := strings.SplitN(line, "\t", 9)
	if len(f) != 9 {
		return Entry{}, fmt.Errorf("%w: %d fields, want 9", ErrMalformed, len(f))
	}
	var e Entry
	var err error
	field := func(name, s string, dst *int64) {
		if err != nil {
			return
		}
		v, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if perr != nil {
			err = fmt.Errorf("%w: %s %q is not an integer", ErrMalformed, name, s)
		}
		*dst = v
	}
	var exitval, signal int64
	field("Seq", f[0], &e.Seq)
	field("Send", f[4], &e.Send)
	field("Receive", f[5], &e.Receive)
	field("Exitval", f[6], &exitval)
	field("Signal", f[7], &signal)
	if err != nil {
		return Entry{}, err
	}
	start, perr := parseSeconds(f[2])
	if perr != nil {
		return Entry{}, fmt.Errorf("%w: Starttime %q: %v", ErrMalformed, f[2], perr)
	}
	runtime, perr := parseSeconds(f[3])
	if perr != nil || runtime < 0 {
		return Entry{}, fmt.Errorf("%w: JobRuntime %q is not a duration in seconds", ErrMalformed, f[3])
	}
	if e.Seq < 1 || e.Seq > MaxSeq {
		return Entry{}, fmt.Errorf("%w: Seq %d is not in 1..%d", ErrMalformed, e.Seq, int64(MaxSeq))
	}
	e.Host = f[1]
	// The log keeps milliseconds; rounding to them undoes float error.
	e.Start = time.UnixMilli(int64(math.Round(start * 1e3)))
	e.Runtime = time.Duration(math.Round(runtime*1e3)) * time.Millisecond
	e.Exitval, e.Signal = int(exitval), int(signal)
	e.Command = f[8]
	return e, nil
}

func parseSeconds(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e12 {
		return 0, fmt.Errorf("out of range")
	}
	return v, nil
}
