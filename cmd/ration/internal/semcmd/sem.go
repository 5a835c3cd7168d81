package semcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
	"github.com/ration-run/ration/internal/closedpipe"
	"github.com/ration-run/ration/internal/flagvalue"
	"github.com/ration-run/ration/internal/logs"
	"github.com/ration-run/ration/internal/sem"
	"github.com/ration-run/ration/limits"
)

const semUsage = `usage: ration sem [flags] [--] COMMAND [ARG...]
       ration sem [--id NAME] --wait

GNU parallel's sem (parallel --semaphore): a counting semaphore shared by
every ration sem with the same --id. ration sem waits until fewer than -j
commands hold the semaphore, then runs COMMAND (its words joined by spaces,
as one shell command line) holding it: in the background by default
(ration sem returns once the command holds the semaphore), with --fg in the
foreground (ration sem exits with the command's status). The output of a
command is printed when it ends, unless -u. --wait waits until none holds
it. The command holds its slot until it ends, even if sem is killed, and
a holder that dies, however it dies, holds nothing: the semaphore is made
of files locked with flock(2) under ~/.parallel/semaphores. SIGINT,
SIGTERM, SIGHUP and SIGQUIT to sem are passed on to its running command.

flags:`

// semFlags are the flags of `ration sem`.
type semFlags struct {
	id, jobs, timeout           string
	fg, bg, wait, ungroup, help bool
	// held is the background child's: the slot is file 3, already held.
	held bool
	// Accepted for GNU parallel's sake.
	semaphore, willCite, noNotice bool
}

func newSemFlagSet(f *semFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("ration sem", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(false)
	fs.StringVar(&f.id, "id", "", "the semaphore's `NAME` (default: the terminal's name, as tty prints it: \"not a tty\" without one)")
	fs.StringVar(&f.id, "semaphorename", "", "same as --id `NAME`")
	fs.StringVarP(&f.jobs, "jobs", "j", "1", "let `N` commands hold the semaphore at once: N, +N or -N (the effective CPUs plus or minus N), N% of the effective CPUs, or a file holding one of them")
	fs.StringVarP(&f.jobs, "max-procs", "P", "1", "same as --jobs `N`")
	fs.BoolVar(&f.fg, "fg", false, "run the command in the foreground and exit with its status")
	fs.BoolVar(&f.bg, "bg", false, "run the command in the background (the default)")
	fs.BoolVar(&f.wait, "wait", false, "wait until fewer than -j commands (by default: none) hold the semaphore")
	fs.BoolVarP(&f.ungroup, "ungroup", "u", false, "print the command's output as it comes, not when it ends")
	fs.StringVar(&f.timeout, "semaphoretimeout", "", "after `SECS` of waiting: take the semaphore anyway (SECS > 0) or exit 1 (SECS < 0)")
	fs.StringVar(&f.timeout, "st", "", "same as --semaphoretimeout `SECS`")
	fs.BoolVar(&f.semaphore, "semaphore", false, "accepted: parallel --semaphore is sem")
	fs.BoolVar(&f.willCite, "will-cite", false, "accepted for GNU parallel's sake")
	fs.BoolVar(&f.noNotice, "no-notice", false, "accepted for GNU parallel's sake")
	fs.BoolVar(&f.held, "held", false, "")
	_ = fs.MarkHidden("held")
	fs.BoolVarP(&f.help, "help", "h", false, "show this help")
	return fs
}

// Flags returns the flags of `ration sem` (for shell completion).
func Flags() *pflag.FlagSet { return newSemFlagSet(&semFlags{}) }

// semPlan is one `ration sem` as decided from its flags and environment.
type semPlan struct {
	dir     string        // the semaphore's directory
	jobs    int           // -j
	timeout time.Duration // --semaphoretimeout: > 0 steal, < 0 give up, 0 wait
	fg      bool
	wait    bool
	ungroup bool
	held    bool
	shell   string // the shell that runs the command
	command string // the command line
}

// Main implements `ration sem`, its signals handled through h (nil: by
// Go's defaults).
func Main(h *signalHub, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var f semFlags
	fs := newSemFlagSet(&f)
	if err := fs.Parse(args); err != nil {
		return fail(stderr, "ration sem", err)
	}
	if f.help {
		fmt.Fprintln(stdout, semUsage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	p, err := planSem(f, fs.Args(), getenv, os.ReadFile)
	if err != nil {
		return fail(stderr, "ration sem", err)
	}
	return runSem(h, p, stdout, stderr)
}

// planSem checks the flags of `ration sem`.
func planSem(f semFlags, args []string, getenv func(string) string, readFile func(string) ([]byte, error)) (semPlan, error) {
	p := semPlan{fg: f.fg || f.held, wait: f.wait, ungroup: f.ungroup, held: f.held, command: strings.Join(args, " ")}
	switch {
	case f.fg && f.bg:
		return p, flagMsg("--fg", "--fg and --bg cannot be combined")
	case !f.wait && len(args) == 0:
		return p, flagMsg("", "no command given (usage: ration sem [flags] COMMAND, or ration sem --wait)")
	}
	id := f.id
	if id == "" {
		// As GNU parallel: the output of tty.
		id = "not a tty"
		if name, err := os.Readlink("/proc/self/fd/0"); err == nil && strings.HasPrefix(name, "/dev/") && logs.IsTerminal(os.Stdin) {
			id = name
		}
	}
	p.dir = sem.Dir(filepath.Join(gnuCacheDir(getenv), "semaphores"), id)
	n, err := semJobs(f.jobs, getenv, readFile)
	if err != nil {
		return p, err
	}
	p.jobs = n
	if f.timeout != "" {
		secs, err := strconv.ParseFloat(f.timeout, 64)
		if err != nil || math.IsInf(secs, 0) || math.IsNaN(secs) {
			d, derr := flagvalue.ParseDuration(f.timeout)
			if derr != nil {
				return p, flagErr("--semaphoretimeout", fmt.Errorf("%q is not a number of seconds", f.timeout))
			}
			secs = d.Seconds()
		}
		p.timeout = time.Duration(secs * float64(time.Second))
	}
	// GNU parallel's shell: $PARALLEL_SHELL, else the shell sem was
	// started from, else sh.
	if p.shell = getenv("PARALLEL_SHELL"); p.shell == "" {
		p.shell = parentShell(getenv)
	}
	return p, nil
}

// semJobs parses sem's -j as GNU parallel does: N, +N and -N (the
// effective CPUs plus or minus N, at least 1: the limits decision without
// RefuseNoSlot), N%, or a file holding one.
func semJobs(spec string, getenv func(string) string, readFile func(string) ([]byte, error)) (int, error) {
	s, file := strings.TrimSpace(spec), ""
	if !cli.JobsSpecRE.MatchString(s) {
		data, err := readFile(spec)
		if err != nil {
			return 0, flagErr("--jobs", fmt.Errorf("%q is not a number, N%%, +N, -N or a readable file", spec))
		}
		s, file = strings.TrimSpace(string(data)), spec
	}
	if s == "0" {
		// GNU parallel's -j 0: no limit.
		return math.MaxInt32, nil
	}
	// The value is checked first for an error in the flag's terms, naming
	// the file it came from (limits.Decide's would say "jobs: ...").
	if err := limits.CheckJobs(s); err != nil {
		if file != "" {
			err = fmt.Errorf("%s: %w", file, err)
		}
		return 0, flagErr("--jobs", err)
	}
	d, err := limits.Decide(limits.Options{Jobs: s, Getenv: getenv})
	if err != nil {
		return 0, flagErr("--jobs", err)
	}
	return d.Jobs, nil
}

// gnuCacheDir is GNU parallel's cache directory, where its semaphores
// live: $PARALLEL_HOME, else $XDG_CACHE_HOME/parallel, when it exists,
// else ~/.parallel.
func gnuCacheDir(getenv func(string) string) string {
	cands := []string{getenv("PARALLEL_HOME")}
	if x := getenv("XDG_CACHE_HOME"); x != "" {
		cands = append(cands, filepath.Join(x, "parallel"))
	}
	for _, d := range cands {
		if st, err := os.Stat(d); d != "" && err == nil && st.IsDir() {
			return d
		}
	}
	return filepath.Join(getenv("HOME"), ".parallel")
}

// runSem runs the planned sem and returns its exit status.
func runSem(h *signalHub, p semPlan, stdout, stderr io.Writer) int {
	var slot *sem.Slot
	if p.held {
		// The background child of a sem: it holds its parent's slot as
		// file 3, and opens no semaphore (its --id is not passed on, so
		// opening one would make the default id's).
		slot = sem.SlotFrom(os.NewFile(3, "semaphore slot"))
	} else {
		s, err := sem.Open(p.dir, sem.Options{})
		if err != nil {
			return fail(stderr, "ration sem", err)
		}
		ctx := context.Background()
		if p.wait {
			if err := s.Wait(ctx, p.jobs); err != nil {
				return fail(stderr, "ration sem", err)
			}
			return 0
		}
		var code int
		if slot, code = acquireSem(ctx, s, p, stderr); slot == nil {
			return code
		}
	}
	defer slot.Release()
	if !p.fg {
		return semBackground(p, slot, stderr)
	}
	return semRun(h, p, slot, stdout, stderr)
}

// acquireSem takes a slot, as --semaphoretimeout says; nil and the exit
// status when none is taken.
func acquireSem(ctx context.Context, s *sem.Semaphore, p semPlan, stderr io.Writer) (*sem.Slot, int) {
	wait := p.timeout
	if wait < 0 {
		wait = -wait
	}
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	slot, err := s.Acquire(ctx, p.jobs)
	switch {
	case err == nil:
		return slot, 0
	case errors.Is(err, context.DeadlineExceeded) && p.timeout > 0:
		fmt.Fprintln(stderr, "ration sem: warning: semaphore timed out; stealing the semaphore")
		if slot, err = s.Steal(); err == nil {
			return slot, 0
		}
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintln(stderr, "ration sem: warning: semaphore timed out; exiting")
		return nil, 1
	}
	return nil, fail(stderr, "ration sem", err)
}

// semBackground starts this program again as `ration sem --held` with the
// slot as its file 3 and the same stdout and stderr, and returns: the
// child holds the slot while it runs the command.
func semBackground(p semPlan, slot *sem.Slot, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		return fail(stderr, "ration sem", err)
	}
	args := []string{"sem", "--held"}
	if p.ungroup {
		args = append(args, "-u")
	}
	cmd := exec.Command(self, append(append(args, "--"), p.command)...)
	// The child's outputs are this process's own files, inherited, so
	// that nothing here has to copy them after it returns.
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{slot.File()}
	cmd.Env = append(os.Environ(), "PARALLEL_SHELL="+p.shell)
	if err := cmd.Start(); err != nil {
		return fail(stderr, "ration sem", err)
	}
	// Not waited for: it outlives this process.
	_ = cmd.Process.Release()
	return 0
}

// semRun runs the command through the shell, its output held until it
// ends (unless -u), and returns its exit status as a shell would. The
// command inherits the slot as its file 3, so that the slot stays held
// while the command runs even if this process is killed: the semaphore
// bounds the commands, not the sem processes. SIGINT, SIGTERM, SIGHUP and
// SIGQUIT are passed on to the command while it runs, as GNU parallel's sem waits
// for its job: sem then ends with the command, its output printed, and
// exits with its status, instead of leaving it running unseen.
func semRun(h *signalHub, p semPlan, slot *sem.Slot, stdout, stderr io.Writer) int {
	cmd := exec.Command(p.shell, "-c", p.command)
	cmd.Stdin = os.Stdin
	cmd.ExtraFiles = []*os.File{slot.File()}
	var outF, errF *os.File
	if p.ungroup {
		cmd.Stdout, cmd.Stderr = closedpipe.Unwrap(stdout), stderr // the file itself, not a copy through a pipe
	} else {
		var err error
		if outF, err = spoolFile(); err == nil {
			errF, err = spoolFile()
		}
		if err != nil {
			return fail(stderr, "ration sem", err)
		}
		defer outF.Close()
		defer errF.Close()
		cmd.Stdout, cmd.Stderr = outF, errF
	}
	err := cmd.Start()
	if err == nil {
		if h != nil {
			h.Set(func(s os.Signal) {
				if isStopSignal(s) || isQuitSignal(s) {
					_ = cmd.Process.Signal(s)
				}
			})
			defer h.Set(nil)
		}
		err = cmd.Wait()
	}
	if outF != nil {
		for _, c := range []struct {
			f *os.File
			w io.Writer
		}{{outF, stdout}, {errF, stderr}} {
			if _, err := c.f.Seek(0, io.SeekStart); err == nil {
				_, _ = io.Copy(c.w, c.f)
			}
		}
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if code := ee.ExitCode(); code >= 0 {
			return code
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return 255
	}
	return fail(stderr, "ration sem", err)
}

// spoolFile is an unnamed temporary file holding a command's output.
func spoolFile() (*os.File, error) {
	f, err := os.CreateTemp("", "ration-sem-*")
	if err != nil {
		return nil, err
	}
	_ = os.Remove(f.Name())
	return f, nil
}
