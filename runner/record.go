package runner

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/joblog"
)

// openJoblog opens the joblog (package joblog: locked against a second
// run, refused when it is one of Config.InputFiles, its torn last record
// cut off and reported) and returns what it recorded, for --resume. A dry
// run reads the record only, without the lock, and writes nothing.
func (r *Runner) openJoblog() (*joblog.Record, *joblog.Writer, error) {
	resume := r.cfg.Resume || r.cfg.ResumeFailed
	if r.cfg.Joblog == "" {
		return nil, nil, nil
	}
	if r.cfg.DryRun {
		if !resume {
			return nil, nil, nil
		}
		rec, err := joblog.LoadSkeleton(r.cfg.Joblog, r.skeleton())
		if err != nil {
			return nil, nil, err
		}
		if err := r.checkCommand(rec); err != nil {
			return nil, nil, err
		}
		r.warnMalformed(rec)
		return rec, nil, nil
	}
	if r.cfg.Joblog == "-" {
		// Written under the lock the jobs' output is printed under, so
		// that a record never lands inside a job's output.
		jl := joblog.NewWriter(lockedWriter{mu: &r.out.mu, w: r.out.stdout})
		if err := jl.WriteHeader(); err != nil {
			return nil, nil, err
		}
		r.mu.Lock()
		r.jl = jl
		r.mu.Unlock()
		return nil, jl, nil
	}
	// Appending (--joblog +FILE) opens the log as resuming does: nothing
	// is emptied, and a torn last record is cut off before the first new
	// one; the records read are not used to skip jobs.
	opts := joblog.Options{Resume: resume || r.cfg.JoblogAppend, Inputs: r.cfg.InputFiles}
	if resume {
		opts.Skeleton = r.skeleton()
	}
	jl, err := joblog.Open(r.cfg.Joblog, opts)
	if err != nil {
		return nil, nil, err
	}
	if err := r.checkCommand(jl.Record()); err != nil {
		jl.Close()
		return nil, nil, err
	}
	if t := jl.Torn(); t != nil {
		r.log.Warn("the joblog's last record was cut off, its job runs again", "joblog", r.cfg.Joblog, "torn", t.Error())
	}
	rec := jl.Record()
	if !resume {
		rec = nil
	}
	if rec != nil {
		r.warnMalformed(rec)
	}
	r.mu.Lock()
	r.jl = jl
	r.mu.Unlock()
	return rec, jl, nil
}

// skeleton is the text every command of this run holds, for telling a
// joblog of another command (nil: any command; one given as the input).
func (r *Runner) skeleton() []string {
	if r.hooks.AnyCommand {
		return nil
	}
	return r.tmpl.Skeleton()
}

// checkCommand refuses a resumed joblog that holds a record of another
// command, unless Config.ResumeAnyCommand.
func (r *Runner) checkCommand(rec *joblog.Record) error {
	if rec == nil || rec.Misfit == nil || r.cfg.ResumeAnyCommand || !(r.cfg.Resume || r.cfg.ResumeFailed) {
		return nil
	}
	cmd := template.Join(r.cfg.Command)
	if r.cfg.Shell {
		cmd = strings.Join(r.cfg.Command, " ")
	}
	return fmt.Errorf("%w: %s records %q (job %d; %d of its records are of another command), but this command is %q",
		ErrOtherCommand, r.cfg.Joblog, rec.Misfit.Command, rec.Misfit.Seq, rec.Misfits, cmd)
}

func (r *Runner) warnMalformed(rec *joblog.Record) {
	if rec.Malformed > 0 {
		r.log.Warn("joblog has malformed lines; their jobs run again", "joblog", r.cfg.Joblog, "lines", rec.Malformed)
	}
}

// lockedWriter writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// closeJoblog closes the joblog at the end of Run; its error (a failed
// write or fsync the Writer kept) is the run's.
func (r *Runner) closeJoblog(jl *joblog.Writer) {
	if jl == nil {
		return
	}
	if err := jl.Close(); err != nil {
		r.setErr(err)
	}
}

// Abandon closes the joblog (fsyncing what it holds) so that the process
// can exit at once without waiting for Run: the last resort of a run whose
// input or output blocks (a reader that stopped reading, an input that
// never ends) after it was told to stop. The jobs whose records are in the
// log are never run again; every other job runs again on --resume.
func (r *Runner) Abandon() error {
	r.mu.Lock()
	jl := r.jl
	r.mu.Unlock()
	if jl == nil {
		return nil
	}
	return jl.Close()
}

// entry is the joblog record of an ended job. Its Exitval and Signal are
// those of joblog.ExitColumns; a job that was stopped by its
// --timeout but exited on its own is recorded as ended by SIGTERM, and a
// job that failed for a reason of ration's while exiting 0 (its output
// was lost, a worker task that failed) gets Exitval -1, so that no failed
// job ever reads as succeeded.
func (r *Runner) entry(j *job, send, received int64) joblog.Entry {
	res := j.res
	exitval, signal := exitColumns(j)
	return joblog.Entry{Seq: j.it.seq, Start: res.Start, Runtime: res.Duration, Send: send, Receive: received,
		Exitval: exitval, Signal: signal, Command: r.displayOf(j.it, j.slot)}
}

// exitColumns are the Exitval and Signal columns of ended job j's record
// (see entry), which --halt's exit status also follows.
func exitColumns(j *job) (exitval, signal int) {
	// As the joblog's format has them: "0 SIG" for a kill from outside, "-1
	// SIG" for the runner's own (--timeout: also an executor's, the
	// worker pool's kill of a task's worker at the timeout), the status
	// of a job that exited on its own after the runner's SIGTERM.
	byRunner := j.res.Stopped || j.cause == event.CauseTimeout
	exitval, signal = joblog.ExitColumns(j.res.ExitCode, j.res.Signal, byRunner)
	if j.outcome != event.Succeeded && exitval == 0 && signal == 0 {
		exitval = -1
	}
	return exitval, signal
}

// writeJoblog writes the job's record. A failed write stops the run: no
// further job starts, the error names the job (not recorded, so --resume
// runs it again) and Run returns it.
func (r *Runner) writeJoblog(jl *joblog.Writer, e joblog.Entry) {
	if err := jl.Write(e); err != nil {
		r.setErr(err)
		r.stop()
	}
}

// outputFailed fails job j whose output was not fully delivered. When
// ration's own stdout or stderr is gone, the run stops: nothing more
// could be printed; and the job is not recorded, so that --resume runs
// it again. Its output never reached the reader through no fault of its
// own, as with a job the run stopped; a record (failed or not) would make
// --resume skip it, and its output would be lost for good. (A runner
// that died of the SIGPIPE would not record that job either.) The first
// job to find
// the output gone fails; a job that finds it gone after that was not
// printed because the run stopped, and is stopped by the run, as the
// running jobs are (with -k, jobs that ended while waiting for their
// turn).
func (r *Runner) outputFailed(j *job, err error) {
	j.outcome = event.Failed
	if j.res.Err == nil {
		j.res.Err = err
	}
	if errors.Is(err, ErrOutputGone) {
		j.undelivered = true
		if r.outputLost.Swap(true) {
			j.byRun, j.outcome = true, event.Stopped
		}
		r.outputGone(fmt.Errorf("job %d: %w", j.it.seq, err))
	}
}

// recorded reports whether the ended job j gets a joblog record: not when
// the run stopped it, nor when its output could not be delivered because
// ration's stdout or stderr is gone (outputFailed); --resume runs those.
func (j *job) recorded() bool { return !j.byRun && !j.undelivered }

// outputGone stops the run because ration's stdout or stderr cannot be
// written: no job starts, the running ones are stopped (their output
// could not be printed either), and Run returns err.
func (r *Runner) outputGone(err error) {
	r.setErr(err)
	r.stop()
	r.stopJobs(err)
}

// record ends job j once its output was printed (flushErr: how that
// went): its records in the record hooks' sinks, then its joblog record.
// Output that could not be delivered, to ration's stdout or stderr or to
// a sink, fails the job (outputFailed) before it is recorded.
func (r *Runner) record(j *job, jl *joblog.Writer, received int64, flushErr error) {
	send := r.hooks.SendSize(j)
	if flushErr != nil {
		r.outputFailed(j, flushErr)
	}
	for _, sink := range r.hooks.Records {
		if !j.recorded() {
			break
		}
		if err := sink(j, r.entry(j, send, received)); err != nil {
			r.outputFailed(j, err)
		}
	}
	if jl != nil && j.recorded() {
		r.writeJoblog(jl, r.entry(j, send, received))
	}
}

// deliver prints the output of a -k job once the jobs before it were
// printed, then writes its joblog record: a job is recorded only after
// its output was delivered.
func (r *Runner) deliver(o *output) {
	if o == nil {
		return
	}
	err := o.flush()
	if o.delivered != nil {
		o.delivered(err)
	}
}
