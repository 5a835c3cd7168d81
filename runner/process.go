package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ration-run/ration/internal/jobcgroup"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/internal/reaper"
	"github.com/ration-run/ration/runner/event"
)

// ProcessExecutor runs each attempt as a new process in its own process
// group, with the argv directly (no shell unless the argv is one), stdin
// from /dev/null and the runner's environment (with the job's
// $PARALLEL_SEQ, $PARALLEL_JOBSLOT, $PARALLEL_PID and the slot less one:
// jobEnv), and an oom_score_adj
// JobOOMScoreAdj above ration's. Stopping a job signals its
// whole process group, so children the job started go with it.
//
// On Unix it starts processes with syscall.ForkExec rather than os/exec: a
// job runner pays os/exec's per-command costs (a /dev/null opened per
// command, two copying goroutines, the environment de-duplicated, a pidfd)
// thousands of times, and for short jobs they were about a quarter of
// ration's own CPU time. It keeps /dev/null open for its whole life, for
// the jobs' stdin. On Windows, which has neither process groups nor
// signals, it uses os/exec, a stopped job is killed at once (no grace),
// and no peak RSS is known.
//
// The zero value is ready to use and safe for concurrent use.
type ProcessExecutor struct {
	// Reaper, when set, starts and waits for the jobs' processes, so that
	// ration running as PID 1 reaps the orphans jobs leave behind without
	// taking the jobs' own exit statuses (see package reaper; it reaps on
	// Linux only). Nil: plain syscall.ForkExec and wait4.
	Reaper *reaper.Reaper
	// Cgroup, when set, is the memory cgroup the jobs start in (package
	// jobcgroup), so that a job's OOM kill never takes ration. Nil: the
	// jobs start in ration's own cgroup. Not on Windows.
	Cgroup *jobcgroup.Group

	paths   sync.Map // argv[0] -> looked-up path, to look PATH up once
	victims memory.Victims
	bufs    sync.Pool // *[]byte, for copying the jobs' output

	stdinOnce sync.Once
	stdin     *os.File // /dev/null, read-only, for every job
	stdinErr  error
}

// DefaultSlotVar is the variable that holds a job's slot less one when
// Attempt.SlotVar is "".
const DefaultSlotVar = "PARALLEL_JOBSLOT0"

// jobEnv is the environment of a's process: ration's, with the job's
// variables in place of any inherited ones: $PARALLEL_SEQ (the job's
// number, {#}), $PARALLEL_JOBSLOT (its slot, {%}), $PARALLEL_PID
// (ration's process id), which scripts written for parallel read, e.g. in
// an exported function that sees no {#}, and the slot less one in
// a.SlotVar (DefaultSlotVar by default).
func jobEnv(a *Attempt) []string {
	slotVar := a.SlotVar
	if slotVar == "" {
		slotVar = DefaultSlotVar
	}
	vars := []string{
		"PARALLEL_SEQ=" + strconv.FormatInt(a.Seq, 10),
		"PARALLEL_JOBSLOT=" + strconv.Itoa(a.Slot),
		"PARALLEL_PID=" + strconv.Itoa(os.Getpid()),
		slotVar + "=" + strconv.Itoa(a.Slot-1),
	}
	var names [4]string // "NAME=" of each of vars
	for i, v := range vars {
		names[i] = v[:strings.IndexByte(v, '=')+1]
	}
	env := os.Environ()
	out := make([]string, 0, len(env)+len(vars))
	for _, kv := range env {
		if !slices.ContainsFunc(names[:], func(n string) bool { return strings.HasPrefix(kv, n) }) {
			out = append(out, kv)
		}
	}
	return append(out, vars...)
}

type lookResult struct {
	path string
	err  error
}

func (e *ProcessExecutor) lookPath(name string) (string, error) {
	if v, ok := e.paths.Load(name); ok {
		r := v.(lookResult)
		return r.path, r.err
	}
	p, err := exec.LookPath(name)
	if err == nil || errors.Is(err, exec.ErrNotFound) {
		e.paths.Store(name, lookResult{p, err})
	}
	return p, err
}

// devNull is the jobs' stdin, opened once.
func (e *ProcessExecutor) devNull() (*os.File, error) {
	e.stdinOnce.Do(func() { e.stdin, e.stdinErr = os.Open(os.DevNull) })
	return e.stdin, e.stdinErr
}

// copyOutput copies one output stream of a job to w (nil: discarded) until
// the job and its children close it. A failed write stops the copy; closing
// the pipe then makes further writes by the job fail (SIGPIPE), as with
// os/exec.
func (e *ProcessExecutor) copyOutput(w io.Writer, r *os.File) error {
	if w == nil {
		w = io.Discard
	}
	bp, _ := e.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 32<<10)
		bp = &b
	}
	defer e.bufs.Put(bp)
	// Not io.Copy: *os.File's WriteTo would allocate a fresh buffer per
	// stream, two per job.
	buf := *bp
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// exited sets how a job ended and its outcome.
func exited(res *AttemptResult, code, sig int, err error) {
	res.ExitCode, res.Signal, res.Err = code, sig, err
	res.Outcome = event.Failed
	if code == 0 && sig == 0 && err == nil {
		res.Outcome = event.Succeeded
	}
}

// startFailed reports a job that could not start the way a shell would:
// the message on the job's stderr, status 127 or 126.
func startFailed(a *Attempt, res AttemptResult, err error) AttemptResult {
	code := 126
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		code = 127
	}
	exited(&res, code, 0, err)
	fmt.Fprintf(a.Diagnostics(), "ration: %s: %v\n", a.Argv[0], unwrapExecErr(err))
	a.started(a.Slot, 0)
	return res
}

// ErrNUL is the error of a job whose command holds a NUL byte, which no
// argument of a process can: it came from an input that holds one.
var ErrNUL = errors.New("an argument holds a NUL byte, which no command can take (inputs that hold NUL bytes are read with -0, which separates inputs by NUL)")

// checkNUL fails an argv that holds a NUL byte with ErrNUL rather than
// exec's bare "invalid argument". The job fails as one that cannot
// start (126).
func checkNUL(argv []string) error {
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return ErrNUL
		}
	}
	return nil
}

func unwrapExecErr(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// programPath is the path of a's program: argv[0] looked up in PATH (once
// per name), or, for a relative path with a slash run in a.Dir, that path
// in a.Dir, as a shell that changed into a.Dir would find it.
func (e *ProcessExecutor) programPath(a *Attempt) (string, error) {
	name := a.Argv[0]
	if a.Dir != "" && !filepath.IsAbs(name) && strings.ContainsAny(name, "/"+string(os.PathSeparator)) {
		return exec.LookPath(filepath.Join(a.Dir, name))
	}
	return e.lookPath(name)
}
