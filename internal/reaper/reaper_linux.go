package reaper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Options configures [New].
type Options struct {
	// Subreaper makes the calling process a child subreaper
	// (PR_SET_CHILD_SUBREAPER) so that orphans of its descendants are
	// reparented to it and reaped even when it is not PID 1. The previous
	// setting is restored by Stop. Tests and supervisors that are not PID 1
	// use it.
	Subreaper bool
}

// Reaper starts child processes and reaps orphans. The zero value is not
// usable; create one with [New]. A Reaper is safe for concurrent use; its
// methods may be called on an inactive Reaper, where Start and Wait behave
// like exec.Cmd's.
type Reaper struct {
	active        bool
	restoreSubrpr bool // Stop clears PR_SET_CHILD_SUBREAPER again

	// gate orders starting children against reaping decisions: Start holds
	// it shared across fork and registration, the reaping loop holds it
	// exclusively from peeking at a PID to collecting it.
	gate sync.RWMutex

	mu    sync.Mutex
	owned map[int]struct{} // PIDs started by Start and not yet waited for

	kick    chan struct{} // buffered(1): look again, an owned child was released
	sigs    chan os.Signal
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
	stopErr error
}

// New returns a Reaper. It is active, and reaps orphans in a background
// goroutine until ctx is done or Stop is called, when the process is PID 1 of
// its PID namespace, or when opts.Subreaper is set (which makes the process a
// child subreaper first). Otherwise orphans are not this process's concern and
// the returned Reaper is inactive. New fails only when the subreaper setting
// cannot be changed.
func New(ctx context.Context, opts Options) (*Reaper, error) {
	r := &Reaper{
		owned:   make(map[int]struct{}),
		kick:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	if opts.Subreaper {
		was, err := isSubreaper()
		if err != nil {
			return nil, err
		}
		if !was {
			if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
				return nil, fmt.Errorf("reaper: become child subreaper: %w", err)
			}
			r.restoreSubrpr = true
		}
	}
	r.active = opts.Subreaper || os.Getpid() == 1
	if !r.active {
		close(r.stopped)
		return r, nil
	}
	// Buffered so that a SIGCHLD arriving while the loop is busy is kept;
	// more than one is not needed because each wake-up drains every exited
	// child.
	r.sigs = make(chan os.Signal, 1)
	signal.Notify(r.sigs, syscall.SIGCHLD)
	go r.loop(ctx)
	return r, nil
}

// Active reports whether r reaps orphans.
func (r *Reaper) Active() bool { return r.active }

// Start starts cmd like cmd.Start and records its process as owned, so that
// its exit status is left for [Reaper.Wait]. On error nothing is recorded.
func (r *Reaper) Start(cmd *exec.Cmd) error {
	_, err := r.own(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	return err
}

// Wait waits for a command started with [Reaper.Start] like cmd.Wait, then
// forgets its PID so that a later process reusing it can be reaped.
func (r *Reaper) Wait(cmd *exec.Cmd) error {
	err := cmd.Wait()
	if r.active && cmd.Process != nil {
		r.release(cmd.Process.Pid)
	}
	return err
}

// ForkExec starts a process like [syscall.ForkExec] and records it as
// owned, so that its exit status is left for [Reaper.Wait4]. On error
// nothing is recorded. A nil Reaper is an inactive one. It is the
// lower-level twin of Start, for callers that manage the child's
// descriptors themselves.
func (r *Reaper) ForkExec(argv0 string, argv []string, attr *syscall.ProcAttr) (int, error) {
	return r.own(func() (int, error) { return syscall.ForkExec(argv0, argv, attr) })
}

// own runs start, which starts one child, and records the child's PID as
// owned. It holds the gate shared across both, so the reaping loop cannot
// take a child that exits before it is recorded.
func (r *Reaper) own(start func() (int, error)) (int, error) {
	if r == nil || !r.active {
		return start()
	}
	r.gate.RLock()
	defer r.gate.RUnlock()
	pid, err := start()
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	r.owned[pid] = struct{}{}
	r.mu.Unlock()
	return pid, nil
}

// Wait4 waits for a process started with [Reaper.ForkExec] like
// [syscall.Wait4] (retrying on EINTR), then forgets its PID so that a later
// process reusing it can be reaped. A nil Reaper is an inactive one.
func (r *Reaper) Wait4(pid int, status *syscall.WaitStatus, rusage *syscall.Rusage) error {
	err := wait4(pid, status, rusage)
	if r != nil && r.active {
		r.release(pid)
	}
	return err
}

// release forgets pid and asks the loop to look again: while the owned child
// was an unwaited zombie it may have hidden orphans behind it.
func (r *Reaper) release(pid int) {
	r.mu.Lock()
	delete(r.owned, pid)
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Stop stops reaping, collects the orphans that have already exited, and
// restores the subreaper setting if New changed it. It waits for the
// background goroutine to return and is safe to call more than once; later
// calls return the first call's result.
func (r *Reaper) Stop() error {
	r.once.Do(func() {
		if r.active {
			close(r.done)
			<-r.stopped
			signal.Stop(r.sigs)
			r.reapAll()
		}
		if r.restoreSubrpr {
			if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); err != nil {
				r.stopErr = fmt.Errorf("reaper: clear child subreaper: %w", err)
			}
		}
	})
	return r.stopErr
}

func (r *Reaper) loop(ctx context.Context) {
	defer close(r.stopped)
	for {
		r.reapAll()
		select {
		case <-ctx.Done():
			return
		case <-r.done:
			return
		case <-r.sigs:
		case <-r.kick:
		}
	}
}

// reapAll collects every exited child that r does not own.
func (r *Reaper) reapAll() {
	r.gate.Lock()
	defer r.gate.Unlock()
	for {
		pid, err := peek()
		if err != nil || pid == 0 {
			return // ECHILD (no children) or none exited yet
		}
		if r.isOwned(pid) {
			// waitid reports the first exited child only, and this one
			// stays waitable until its owner calls Wait. Orphans that
			// exited behind it are found in /proc instead; the owner's
			// Wait kicks the loop to look again afterwards.
			r.reapListed()
			return
		}
		if !collect(pid) {
			return
		}
	}
}

// reapListed collects the exited, unowned children listed in /proc. It does
// nothing when /proc belongs to another PID namespace, where its PIDs would
// name other processes.
func (r *Reaper) reapListed() {
	self := os.Getpid()
	if procSelfPid() != self {
		return
	}
	for pid := range zombieChildren(self) {
		if !r.isOwned(pid) {
			collect(pid)
		}
	}
}

func (r *Reaper) isOwned(pid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.owned[pid]
	return ok
}

// collect reaps pid, which has exited, and reports whether it did.
func collect(pid int) bool {
	var ws unix.WaitStatus
	for {
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && got == pid
	}
}

// siginfo is the prefix of the kernel's siginfo_t for SIGCHLD that waitid
// fills in; unix.Siginfo does not expose si_pid.
type siginfo struct {
	signo  int32
	errno  int32
	code   int32
	_      int32
	pid    int32
	uid    uint32
	status int32
	_      [128 - 28]byte
}

// peek returns the PID of an exited child without reaping it, 0 when no
// child has exited yet.
func peek() (int, error) {
	for {
		var info siginfo
		_, _, e := unix.Syscall6(unix.SYS_WAITID, unix.P_ALL, 0, uintptr(unsafe.Pointer(&info)),
			unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(info.pid), nil
	}
}

func isSubreaper() (bool, error) {
	var v int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0); err != nil {
		return false, fmt.Errorf("reaper: read child subreaper setting: %w", err)
	}
	return v != 0, nil
}

// procSelfPid is this process's PID as the mounted /proc numbers it, -1 when
// unknown.
func procSelfPid() int {
	s, err := os.Readlink("/proc/self")
	if err != nil {
		return -1
	}
	pid, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return pid
}

// zombieChildren yields the PIDs of zombie processes whose parent is ppid.
func zombieChildren(ppid int) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			st, err := readStat(pid)
			if err != nil || st.state != 'Z' || st.ppid != ppid {
				continue
			}
			if !yield(pid) {
				return
			}
		}
	}
}

// procStat is the part of /proc/PID/stat the reaper needs.
type procStat struct {
	state byte
	ppid  int
}

// readStat parses /proc/PID/stat. The command name is skipped by its last
// ')' because it may contain spaces and parentheses.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("reaper: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("reaper: malformed /proc/%d/stat", pid)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("reaper: malformed /proc/%d/stat: %w", pid, err)
	}
	return procStat{state: f[0][0], ppid: ppid}, nil
}

// wait4 is syscall.Wait4 for one child, retried on EINTR.
func wait4(pid int, status *syscall.WaitStatus, rusage *syscall.Rusage) error {
	for {
		_, err := syscall.Wait4(pid, status, 0, rusage)
		if err != syscall.EINTR {
			return err
		}
	}
}
