package worker

import (
	"encoding/json"

	"github.com/ration-run/ration/internal/pdeath"

	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/internal/reaper"
)

// lineMsg is one line read from a worker's stdout, or the reason reading
// stopped early.
type lineMsg struct {
	line []byte
	err  error
}

var errLineTooLong = errors.New("stdout line longer than the limit")

// proc is one running worker process and the goroutines that serve it:
// a stdout line reader, a stderr forwarder and a waiter. All three end
// once the process group is dead and release has been called.
type proc struct {
	cmd    *exec.Cmd
	reaper *reaper.Reaper // nil: cmd's own Start and Wait
	pid    int
	stdin  *os.File
	stdout *os.File
	stderr *os.File

	lines chan lineMsg // closed at stdout EOF
	// stderrIDs are the ids of the answers the worker wrote on its
	// stderr (looksLikeAnswer), for the task waiting for one on stdout.
	stderrIDs chan int64
	exited    chan struct{}  // closed once Wait returned
	errEOF    chan struct{}  // closed at stderr EOF
	done      chan struct{}  // closed by release: nobody reads lines any more
	wg        sync.WaitGroup // the three goroutines

	tailMu sync.Mutex
	tail   []string // last stderr lines, oldest first
	tailN  int

	oom func() (int64, error) // nil when the OOM counter is unreadable
}

// startProc starts one worker process in its own process group.
func (p *Pool) startProc(slot int) (*proc, error) {
	c := p.cfg
	cmd := exec.Command(c.Command[0], c.Command[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.SysProcAttr = workerProcAttr()
	c.Cgroup.SetProcAttr(cmd.SysProcAttr)

	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	// *os.File values: exec starts no copying goroutines, and Wait does not
	// wait for our readers.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	start := cmd.Start
	if c.Reaper != nil {
		start = func() error { return c.Reaper.Start(cmd) }
	}
	// On the forking thread, so that the worker's parent-death signal
	// means ration's death (package pdeath); on cgroup v1, one in the
	// workers' cgroup; with NiceSet, one at that niceness.
	th := pdeath.Thread{Tasks: c.Cgroup.Tasks(), Nice: c.Nice, NiceSet: c.NiceSet}
	if terr := pdeath.DoOn(th, func() { err = start() }); terr != nil {
		err = terr
	}
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("worker: starting %s: %w", c.Command[0], err)
	}
	memory.PreferAsVictim(cmd.Process.Pid)
	inR.Close()
	outW.Close()
	errW.Close()

	pr := &proc{cmd: cmd, reaper: c.Reaper, pid: cmd.Process.Pid, stdin: inW, stdout: outR, stderr: errR,
		lines: make(chan lineMsg), stderrIDs: make(chan int64, 16), exited: make(chan struct{}), errEOF: make(chan struct{}),
		done: make(chan struct{}), tailN: c.StderrLines}
	pr.wg.Add(3)
	go pr.wait()
	go pr.readStdout(c.MaxLine)
	go pr.readStderr(p, slot)

	if c.OnStart != nil {
		if err := c.OnStart(pr.pid); err != nil {
			pr.kill()
			pr.release()
			return nil, fmt.Errorf("worker: start hook for pid %d: %w", pr.pid, err)
		}
	}
	if c.OOMKills != nil {
		pr.oom = c.OOMKills
	} else {
		pr.oom = oomCounterOf(pr.pid)
	}
	return pr, nil
}

func (pr *proc) wait() {
	defer pr.wg.Done()
	if pr.reaper != nil {
		pr.reaper.Wait(pr.cmd) // the status is in cmd.ProcessState
	} else {
		pr.cmd.Wait()
	}
	close(pr.exited)
}

func (pr *proc) readStdout(maxLine int) {
	defer pr.wg.Done()
	defer close(pr.lines)
	br := bufio.NewReaderSize(pr.stdout, 64<<10)
	for {
		var line []byte
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			line = append(line, chunk...)
			size := len(line)
			if err == nil {
				size-- // the newline ReadSlice found ends the line; it is not part of it
			}
			if size > maxLine {
				err = errLineTooLong
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if errors.Is(err, errLineTooLong) {
			pr.send(lineMsg{line: line[:min(len(line), 200)], err: err})
			return
		}
		if len(line) > 0 {
			if !pr.send(lineMsg{line: bytes.TrimSuffix(line, []byte("\n"))}) {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (pr *proc) send(m lineMsg) bool {
	select {
	case pr.lines <- m:
		return true
	case <-pr.done:
		return false
	}
}

// looksLikeAnswer reports whether a stderr line looks like a protocol
// answer, which a worker must write on stdout.
func looksLikeAnswer(line string) bool {
	line = strings.TrimSpace(line)
	return strings.HasPrefix(line, "{") && strings.Contains(line, `"id"`) &&
		(strings.Contains(line, `"ok"`) || strings.Contains(line, `"output"`))
}

// answerID returns the id of an answer-like line.
func answerID(line string) (int64, bool) {
	var v struct {
		ID *int64 `json:"id"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(line)), &v) != nil || v.ID == nil {
		return 0, false
	}
	return *v.ID, true
}

func (pr *proc) readStderr(p *Pool, slot int) {
	defer pr.wg.Done()
	defer close(pr.errEOF)
	br := bufio.NewReaderSize(pr.stderr, 16<<10)
	prefix := fmt.Sprintf("[%d] ", slot)
	for {
		// A line longer than the buffer is passed on in pieces, each
		// prefixed: stderr is for people, and memory stays bounded.
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			text := strings.TrimSuffix(string(chunk), "\n")
			pr.tailMu.Lock()
			if pr.tailN > 0 {
				if len(pr.tail) == pr.tailN {
					pr.tail = append(pr.tail[:0], pr.tail[1:]...)
				}
				pr.tail = append(pr.tail, text)
			}
			pr.tailMu.Unlock()
			p.writeStderr(prefix + text + "\n")
			if looksLikeAnswer(text) {
				if !p.answerHint.Swap(true) {
					p.writeStderr(fmt.Sprintf("ration: hint: worker %d wrote what looks like an answer on its stderr; answers go to stdout, one JSON line each, and the task waits for one there (docs/workers.md)\n", slot))
				}
				if id, ok := answerID(text); ok {
					select {
					case pr.stderrIDs <- id:
					default: // the task reads them as they come; a flood is not news
					}
				}
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// lastStderr returns a copy of the last stderr lines, after waiting a
// little for the stream to end so that a dying worker's last words (a
// traceback, "Killed") are included.
func (pr *proc) lastStderr() []string {
	select {
	case <-pr.errEOF:
	case <-time.After(500 * time.Millisecond):
	}
	pr.tailMu.Lock()
	defer pr.tailMu.Unlock()
	return append([]string(nil), pr.tail...)
}

// kill kills the worker's process group, then the worker itself in case
// it left the group.
func (pr *proc) kill() {
	killGroup(pr.pid)
	pr.cmd.Process.Kill()
}

// killAndWait kills the process group and waits for the worker to be
// reaped.
func (pr *proc) killAndWait() {
	pr.kill()
	<-pr.exited
}

// release kills whatever is left of the process group (children that
// outlived the worker), closes our pipe ends, which unblocks readers held
// up by such children, and waits for the helper goroutines.
func (pr *proc) release() {
	<-pr.exited
	killGroup(pr.pid)
	close(pr.done)
	pr.stdin.Close()
	// Let the readers see EOF on their own first, so no output is cut.
	select {
	case <-pr.errEOF:
	case <-time.After(100 * time.Millisecond):
	}
	pr.stdout.Close()
	pr.stderr.Close()
	pr.wg.Wait()
}

// status classifies how the reaped worker ended: exit status or signal.
func (pr *proc) status() (exitCode int, sig syscall.Signal) {
	ws, ok := pr.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return pr.cmd.ProcessState.ExitCode(), 0
	}
	if ws.Signaled() {
		return -1, ws.Signal()
	}
	return ws.ExitStatus(), 0
}

// oomKills reads the OOM counter, -1 when it cannot be read.
func (pr *proc) oomKills() int64 {
	if pr.oom == nil {
		return -1
	}
	n, err := pr.oom()
	if err != nil {
		return -1
	}
	return n
}

// oomCounterOf locates the memory cgroup of pid and returns a reader of its
// oom_kill counter. The directory is found while the process is alive, so
// the counter can still be read after it was killed. nil when there is no
// readable memory cgroup.
func oomCounterOf(pid int) func() (int64, error) {
	snap, err := cgroup.Reader{}.ReadProcess(pid)
	if err != nil || snap.MemoryDir == "" {
		return nil
	}
	dir, version := snap.MemoryDir, snap.MemoryVersion
	if _, err := cgroup.OOMKills(dir, version); err != nil {
		return nil
	}
	return func() (int64, error) { return cgroup.OOMKills(dir, version) }
}

// treeRSS is the resident set size of pid and all its descendants, in
// bytes.
func treeRSS(pid int) (int64, error) {
	root, err := process.NewProcess(int32(pid))
	if err != nil {
		return 0, err
	}
	var total int64
	var walk func(p *process.Process, depth int) error
	walk = func(p *process.Process, depth int) error {
		mi, err := p.MemoryInfo()
		if err != nil {
			return err
		}
		total += int64(mi.RSS)
		if depth > 32 {
			return nil
		}
		kids, err := childrenOf(p)
		if err != nil {
			return nil // no children (gopsutil says so with an error)
		}
		for _, k := range kids {
			walk(k, depth+1) // a child that just exited is skipped
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return 0, err
	}
	return total, nil
}
