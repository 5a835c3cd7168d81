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
// parallel writes them. Host is ":" for the local machine. ExitColumns says
// what Exitval and Signal hold for a killed job.
//
// # Guarantees
//
// These hold for a joblog opened with Open (or Create) on a regular file;
// a device or a FIFO (--joblog /dev/stdout) gets whole lines only.
//
//   - A record is complete only with its newline, which is its commit mark.
//     Each record is formatted whole in memory and handed to the kernel in
//     one write(2) on a file opened with O_APPEND, under the Writer's mutex
//     and the file lock, so records never interleave. (os.File.Write calls
//     write(2) again only after a short write, which for a regular file
//     means the disk filled; the cut-back below then applies.) A record cut off by a crash or a full disk is a last
//     line without a newline: every reader (Entries, Load, Open) ignores it,
//     so its job counts as not ended and --resume runs it again; Open with
//     Options.Resume cuts it off the file and reports it (Writer.Torn).
//   - A failed or short write returns an error naming the job and cuts the
//     file back to the end of the last whole record, so no partial line is
//     left for a later record to merge into; the Writer then refuses every
//     further record (see Writer.Write for what the caller must do).
//   - Records are fsync'd at most Options.SyncInterval (default 1 s) or
//     Options.SyncEvery records (default 1000) after they were written,
//     whichever comes first, and at Close; Open fsyncs the log once it is
//     truncated or repaired and its header written, and fsyncs the
//     directory when it created the file. A power cut loses at most the
//     records of the last interval, never makes a lost record look written,
//     and a torn last record is repaired on the next open.
//   - One writer at a time: Open takes an exclusive lock (flock) before it
//     truncates, repairs or appends, and holds it until Close or the death
//     of the process. A second Open, from any process or the same one,
//     fails with an error wrapping ErrLocked that names the holder's pid
//     (on Linux, from /proc/locks). Other Unix systems lock the same way
//     without naming the holder; Windows and other systems do not lock.
//   - Open with Options.Inputs refuses a log that is the same file as an
//     input (device and inode, so symlinks, ./ and hard links are caught)
//     before it truncates or appends anything; CheckNotInput checks the
//     same earlier, before the caller opens anything.
//   - A Writer never writes a line longer than Options.MaxLine (default
//     MaxLine, 1 MiB): a longer Command column is cut, with a marker.
//     Readers accept lines up to MaxReadLine (16 MiB, more than any Writer
//     writes) and fail clearly beyond it, in bounded memory.
//
// With these, a job whose record is in the log ran to its end and is never
// run again by --resume; a job whose record is missing or torn (at most the
// one record being written when the run died, plus the records not yet
// fsync'd when the machine itself died) runs again.
//
// It imports the standard library only.
package joblog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Header is the first line of a joblog, without its newline.
const Header = "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand"

// MaxSeq is the largest job number a joblog may hold. It bounds the memory a
// Record of a hostile or corrupt log can take (256 MiB of bits).
const MaxSeq = 1<<31 - 1

// LocalHost is the Host column GNU parallel writes for jobs run locally.
const LocalHost = ":"

// MaxLine is the default longest line, newline included, that a Writer
// writes: a record whose Command column would make it longer gets its
// Command cut to fit, ending in a marker that says how many bytes were
// cut. 1 MiB keeps ten thousand such lines in a report readable.
const MaxLine = 1 << 20

// minMaxLine is the smallest Options.MaxLine, room for the other columns
// and a cut marker.
const minMaxLine = 1 << 10

// Entry is one finished job.
type Entry struct {
	Seq     int64         // job number, 1-based in input order
	Host    string        // ":" for local jobs
	Start   time.Time     // when the job started
	Runtime time.Duration // how long it ran
	Send    int64         // bytes sent to the job's stdin (--pipe's block)
	Receive int64         // bytes the job wrote (GNU parallel's count: stdout; with --line-buffer stderr too)
	Exitval int           // exit status; see ExitColumns for killed jobs
	Signal  int           // signal that ended the job, 0 if none
	Command string        // the command as a shell would read it (display only)
}

// Succeeded reports whether the job exited 0 and was not killed.
func (e Entry) Succeeded() bool { return e.Exitval == 0 && e.Signal == 0 }

// ExitColumns returns the Exitval and Signal columns of a job's record as
// GNU parallel 20221122 writes them, from how the job ended: code is its
// exit status (ignored when sig is not 0), sig the signal that ended it (0
// if it exited), byRunner whether the runner itself sent that signal (a
// --timeout):
//
//	exited with status code            code, 0
//	killed by sig from outside         0, sig   (another process, the job itself, the OOM killer)
//	killed by sig sent by the runner   -1, sig
//
// A job that the runner signalled but that exited on its own is "exited":
// GNU parallel writes its status with Signal 0.
func ExitColumns(code, sig int, byRunner bool) (exitval, signal int) {
	switch {
	case sig == 0:
		return code, 0
	case byRunner:
		return -1, sig
	default:
		return 0, sig
	}
}

// escaper keeps tabs and newlines, which would break the format, out of a
// column.
var escaper = strings.NewReplacer("\t", `\t`, "\n", `\n`, "\r", `\r`)

// appendLine appends e as one joblog line with its newline, its Command cut
// so that the line is at most maxLine bytes.
func (e Entry) appendLine(b []byte, maxLine int) []byte {
	host := e.Host
	if host == "" {
		host = LocalHost
	}
	ms := max(e.Start.UnixMilli(), 0) // the format has no sign for times before 1970
	start := len(b)
	b = fmt.Appendf(b, "%d\t%s\t%d.%03d\t%10.3f\t%d\t%d\t%d\t%d\t",
		e.Seq, escaper.Replace(host), ms/1000, ms%1000, e.Runtime.Seconds(), e.Send, e.Receive, e.Exitval, e.Signal)
	cmd := escaper.Replace(e.Command)
	if room := maxLine - (len(b) - start) - 1; len(cmd) > room {
		cmd = cut(cmd, room)
	}
	b = append(b, cmd...)
	return append(b, '\n')
}

// cut shortens s to at most room bytes (room >= 64 for a useful result),
// at a rune boundary, ending in a marker that counts the bytes cut.
func cut(s string, room int) string {
	keep := room - len(cutMarker(len(s)))
	if keep < 0 {
		return ""
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + cutMarker(len(s)-keep)
}

func cutMarker(n int) string { return fmt.Sprintf("[... %d bytes cut]", n) }

// line formats e as one joblog line of at most MaxLine bytes.
func (e Entry) line() string { return string(e.appendLine(nil, MaxLine)) }

// Options configure Open. The zero value opens a fresh log with the
// defaults.
type Options struct {
	// Resume appends to an existing log (--resume, --resume-failed):
	// Open reads it under the lock into Writer.Record, cuts off a torn
	// last line (Writer.Torn) and writes the header only if the log is
	// empty. Without Resume, Open empties the log after the checks and
	// writes the header.
	Resume bool

	// Inputs are the paths of the run's input files ("-" is stdin). Open
	// fails, wrapping ErrSameFile, before it changes the log if the log
	// is one of them; see CheckNotInput.
	Inputs []string

	// SyncInterval bounds how long a written record waits for its fsync:
	// 0 means 1 s, a negative value no bound by time.
	SyncInterval time.Duration

	// SyncEvery fsyncs after this many unsynced records: 0 means 1000,
	// 1 every record, a negative value no bound by count.
	SyncEvery int

	// Skeleton, with Resume, is the text every Command of the run's
	// command holds (template.Template.Skeleton): Record.Misfits counts
	// the records read whose Command does not fit it (see Fits). Nil
	// checks nothing.
	Skeleton []string

	// MaxLine is the longest line written, newline included: 0 means
	// MaxLine; values are clamped to 1 KiB..MaxReadLine, so every line a
	// Writer writes reads back.
	MaxLine int
}

// Writer appends entries to a joblog. It is safe for concurrent use.
type Writer struct {
	maxLine      int
	syncEvery    int
	syncInterval time.Duration

	mu       sync.Mutex
	w        io.Writer
	f        *os.File // the log when it is a regular file Open opened; nil otherwise
	c        io.Closer
	size     int64 // bytes in the log, for cutting back a failed write (f only)
	unsynced int   // records written since the last fsync (f only)
	timer    *time.Timer
	timerGen uint64 // counts timers, so a late callback knows it is stale
	err      error  // the first write or fsync error; refuses all later records
	closed   bool
	syncs    int // fsyncs done, for tests

	rec  *Record
	torn *Torn

	timers sync.WaitGroup // a running timer callback
}

// ErrClosed is returned by Write and WriteHeader after Close.
var ErrClosed = errors.New("joblog: closed")

// NewWriter returns a Writer that writes lines of at most MaxLine bytes to
// w. It writes no header (call WriteHeader for a new log), takes no lock,
// never syncs and cuts nothing back after a failed write.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, maxLine: MaxLine} }

// Create opens the joblog at path: Open with Options{Resume:
// appendExisting} and the defaults. It is kept for callers that have no
// inputs to check and need no Record.
func Create(path string, appendExisting bool) (*Writer, error) {
	return Open(path, Options{Resume: appendExisting})
}

// Open opens the joblog at path for writing, in this order, so that no
// byte of the file changes before every check passed:
//
//  1. open (creating a missing file, never truncating);
//  2. lock it against a second writer, failing with ErrLocked;
//  3. check it is none of opt.Inputs, failing with ErrSameFile;
//  4. with opt.Resume, read it into Writer.Record and cut off a torn last
//     line (Writer.Torn); without, empty it;
//  5. write the header into an empty log and fsync the log (and its
//     directory if Open created it).
//
// A device or FIFO (/dev/stdout) is opened for writing only and gets the
// header; it is not locked, checked, read, truncated or synced. A
// non-nil error leaves nothing open.
func Open(path string, opt Options) (*Writer, error) {
	w := &Writer{maxLine: opt.MaxLine, syncEvery: opt.SyncEvery, syncInterval: opt.SyncInterval}
	if w.maxLine == 0 {
		w.maxLine = MaxLine
	}
	w.maxLine = min(max(w.maxLine, minMaxLine), MaxReadLine)
	if w.syncEvery == 0 {
		w.syncEvery = 1000
	}
	if w.syncInterval == 0 {
		w.syncInterval = time.Second
	}
	fi, err := os.Stat(path)
	created := errors.Is(err, os.ErrNotExist)
	flag := os.O_RDWR | os.O_CREATE | os.O_APPEND
	if err == nil && !fi.Mode().IsRegular() {
		// Reading a FIFO would block and a device has nothing to read.
		flag = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, fmt.Errorf("joblog: %w", err)
	}
	w.w, w.c = f, f
	if err := w.setup(path, f, opt, created); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// setup does steps 2 to 5 of Open on the opened f.
func (w *Writer) setup(path string, f *os.File, opt Options, created bool) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("joblog: %w", err)
	}
	if !fi.Mode().IsRegular() {
		if opt.Resume {
			w.rec = &Record{}
		}
		return w.WriteHeader()
	}
	w.f = f
	if err := lock(f, path); err != nil {
		return err
	}
	if err := checkNotInput(path, fi, opt.Inputs); err != nil {
		return err
	}
	if opt.Resume {
		// Read through the locked file, not by path: nobody can append
		// between this read and the first record.
		if w.rec, err = readRecord(io.NewSectionReader(f, 0, fi.Size()), opt.Skeleton); err != nil {
			return err
		}
		w.size = fi.Size()
		if t := w.rec.Torn; t != nil {
			// Cut the torn line off rather than end it with a newline:
			// the newline is a record's commit mark, and a record cut
			// anywhere (mid-Command, or with all nine fields but not
			// all its bytes) must not become a complete line that
			// --resume, GNU parallel or `ration report` would count as
			// a finished job. Cutting also leaves a log in which every
			// line is whole, with no malformed line to warn about in
			// every later run. The job runs again on this resume.
			if err := f.Truncate(t.Offset); err != nil {
				return fmt.Errorf("joblog: cut off the torn last line: %w", err)
			}
			w.size, w.torn = t.Offset, t
		}
	} else if err := f.Truncate(0); err != nil {
		return fmt.Errorf("joblog: %w", err)
	}
	if w.size == 0 {
		if err := w.WriteHeader(); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("joblog: fsync: %w", err)
	}
	w.syncs++
	if created {
		if err := syncDir(filepath.Dir(path)); err != nil {
			return fmt.Errorf("joblog: fsync the directory: %w", err)
		}
	}
	return nil
}

// syncDir fsyncs a directory, so that a file created in it survives a
// power cut. Windows cannot open a directory for that, and needs not.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Record is what the log held when Open opened it with Options.Resume
// (read under the lock, torn last line excluded), for --resume and
// --resume-failed; nil without Resume or for a Writer from NewWriter.
func (w *Writer) Record() *Record { return w.rec }

// Torn is the torn last line that Open cut off the log (see Torn), nil if
// there was none. The caller should log it: it names the bytes cut and
// says their job runs again.
func (w *Writer) Torn() *Torn { return w.torn }

// WriteHeader writes the header line.
func (w *Writer) WriteHeader() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.writeLocked([]byte(Header + "\n")); err != nil {
		return fmt.Errorf("joblog: write header: %w", err)
	}
	return nil
}

// Write appends e as one line, with a single write call.
//
// A non-nil error means e is not in the log: no byte of it is left there
// (a short write is cut back; if even that fails, the error says so and
// the next Open cuts the torn line off). After an error every later Write
// fails too, since the disk or file is in trouble. The caller must treat
// e's job as not recorded: stop starting jobs, name the job and the error
// on stderr, and exit non-zero; --resume will run that job again. The same
// holds for an error from a background fsync, which the next Write (or
// Close) returns: records written since the last fsync may not be durable.
func (w *Writer) Write(e Entry) error {
	line := e.appendLine(nil, w.maxLine)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.writeLocked(line); err != nil {
		return fmt.Errorf("joblog: job %d not recorded: %w", e.Seq, err)
	}
	w.unsynced++
	switch {
	case w.f == nil:
	case w.syncEvery > 0 && w.unsynced >= w.syncEvery:
		if err := w.syncLocked(); err != nil {
			return fmt.Errorf("joblog: job %d recorded but not synced: %w", e.Seq, err)
		}
	case w.syncInterval > 0 && w.timer == nil:
		w.timers.Add(1)
		w.timerGen++
		gen := w.timerGen
		w.timer = time.AfterFunc(w.syncInterval, func() { w.syncTimer(gen) })
	}
	return nil
}

// writeLocked writes b with one write call, cutting the log back to its
// last whole line if the write failed or fell short.
func (w *Writer) writeLocked(b []byte) error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return fmt.Errorf("an earlier write failed: %w", w.err)
	}
	n, err := w.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err == nil {
		w.size += int64(n)
		return nil
	}
	if n > 0 && w.f != nil {
		if terr := w.f.Truncate(w.size); terr != nil {
			err = fmt.Errorf("%w; cutting the partial line back also failed (the next open cuts it): %w", err, terr)
		}
	}
	w.err = err
	return err
}

// syncTimer fsyncs the records that timer number gen waited for. A timer
// that is no longer the newest lost a race with Stop: its records were
// synced already.
func (w *Writer) syncTimer(gen uint64) {
	defer w.timers.Done()
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen != w.timerGen || w.timer == nil {
		return
	}
	w.timer = nil
	if !w.closed && w.err == nil {
		w.syncLocked() // an error is kept in w.err for the next Write or Close
	}
}

// syncLocked fsyncs the log if a record is waiting for it.
func (w *Writer) syncLocked() error {
	if w.timer != nil && w.timer.Stop() {
		w.timers.Done()
	}
	w.timer = nil
	if w.f == nil || w.unsynced == 0 {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		// After a failed fsync the kernel may have dropped the dirty
		// pages, so a later fsync succeeding proves nothing: refuse
		// every later record.
		w.err = fmt.Errorf("fsync: %w", err)
		return w.err
	}
	w.unsynced = 0
	w.syncs++
	return nil
}

// Sync fsyncs the records written so far, now. It returns the first write
// or fsync error the Writer met, if any.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return fmt.Errorf("joblog: %w", w.err)
	}
	if err := w.syncLocked(); err != nil {
		return fmt.Errorf("joblog: %w", err)
	}
	return nil
}

// Close fsyncs the records not yet synced, releases the lock and closes the
// file that Open opened (a Writer from NewWriter closes nothing). It
// returns the first write or fsync error the Writer met, if any, so a
// caller that checks Close learns of a failed background fsync. Close after
// Close returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	var errs []error
	if w.err == nil {
		errs = append(errs, w.syncLocked())
	} else {
		errs = append(errs, w.err)
		if w.timer != nil && w.timer.Stop() {
			w.timers.Done()
		}
		w.timer = nil
	}
	w.closed = true
	if w.c != nil {
		errs = append(errs, w.c.Close()) // closing releases the lock
	}
	w.mu.Unlock()
	w.timers.Wait() // a callback that missed Stop sees closed and returns
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("joblog: %w", err)
	}
	return nil
}
