package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// spec describes one contender run.
type spec struct {
	Name     string
	Args     []string
	Stdin    func(w io.Writer) error // writes the inputs; nil: empty stdin
	CPUQuota float64                 // CPUs; 0: no quota
	MemLimit int64                   // bytes; 0: no limit
	Timeout  time.Duration
	Env      []string
	// During runs in its own goroutine while the contender runs and must
	// return when ctx is done; it may change the cgroup (quota scenario).
	During func(ctx context.Context, cg *cgroup, pid int, start time.Time)
	// Stop, when > 0, sends SIGTERM to the contender after this long (for
	// open-ended runs that are measured over a window).
	Stop time.Duration
}

// result is what the harness measured for one contender run.
type result struct {
	Name     string
	Args     []string
	Wall     time.Duration
	Exit     int // exit status; 128+N when killed by signal N
	TimedOut bool
	Done     map[int]time.Duration // job id -> time its "done ID" line arrived
	Lines    int                   // stdout lines
	LastLine string                // the last stdout line
	Stderr   string                // last part of stderr
	MaxRSS   int64                 // bytes, ru_maxrss of the contender process
	cgStats
	Err error // the harness could not run it at all
}

var runSeq int

// run starts s in a fresh child cgroup of h, feeds its stdin, waits for it
// (or its timeout, or ctx) and removes the cgroup whatever happens.
func run(ctx context.Context, h *hierarchy, s spec) result {
	runSeq++
	r := result{Name: s.Name, Args: s.Args, Done: map[int]time.Duration{}}
	name := fmt.Sprintf("ration-bench-%d-%03d", os.Getpid(), runSeq)
	cg, err := h.newChild(name, s.CPUQuota, s.MemLimit)
	if err != nil {
		r.Err = err
		return r
	}
	defer func() {
		if err := cg.remove(); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
	}()

	argv := cg.wrap(s.Args)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.Err = err
		return r
	}
	var stderr tailBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		r.Err = err
		return r
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.Err = fmt.Errorf("start %s: %w", s.Args[0], err)
		return r
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // feed inputs; a contender that stops reading ends this with EPIPE
		defer wg.Done()
		if s.Stdin != nil {
			_ = s.Stdin(stdin)
		}
		stdin.Close()
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			r.Lines++
			r.LastLine = sc.Text()
			if id, ok := doneID(sc.Text()); ok {
				if _, dup := r.Done[id]; !dup {
					r.Done[id] = time.Since(start)
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	below := cg.watchOOMKillsBelow()
	dctx, stopDuring := context.WithCancel(ctx)
	duringDone := make(chan struct{})
	go func() {
		defer close(duringDone)
		if s.During != nil {
			s.During(dctx, cg, cmd.Process.Pid, start)
		}
	}()

	waitErr := make(chan error, 1)
	go func() {
		wg.Wait() // stdout fully read before Wait closes the pipe
		waitErr <- cmd.Wait()
	}()
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = time.Hour
	}
	tmr := time.NewTimer(timeout)
	defer tmr.Stop()
	var stopC <-chan time.Time
	if s.Stop > 0 {
		st := time.NewTimer(s.Stop)
		defer st.Stop()
		stopC = st.C
	}
	var werr error
loop:
	for {
		select {
		case werr = <-waitErr:
			break loop
		case <-stopC:
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
			stopC = nil
		case <-tmr.C:
			r.TimedOut = true
			killTree(cg, cmd)
		case <-ctx.Done():
			r.Err = ctx.Err()
			killTree(cg, cmd)
		}
	}
	r.Wall = time.Since(start)
	stopDuring()
	<-duringDone
	r.Exit = exitStatus(cmd.ProcessState, werr)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru != nil {
		r.MaxRSS = ru.Maxrss << 10
	}
	r.cgStats = cg.stats()
	r.OOMKills += below()
	r.Stderr = stderr.String()
	return r
}

// killTree kills the contender's process group and every task in its cgroup
// (a contender's jobs may have left the group with setsid).
func killTree(cg *cgroup, cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	for _, p := range readPids(cg.memory + "/cgroup.procs") {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

func exitStatus(ps *os.ProcessState, err error) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return -1
	}
	return ps.ExitCode()
}

// doneID finds "done N" in a stdout line, wherever a tool put it (bare, or
// inside a worker's JSON output).
func doneID(line string) (int, bool) {
	i := strings.Index(line, "done ")
	if i < 0 {
		return 0, false
	}
	rest := line[i+5:]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(rest[:j])
	return n, err == nil
}

// tailBuffer keeps the first and the last 8 KiB written to it.
type tailBuffer struct {
	mu         sync.Mutex
	head, tail []byte
	dropped    int
}

const tailKeep = 8 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if room := tailKeep - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	t.tail = append(t.tail, p...)
	if over := len(t.tail) - tailKeep; over > 0 {
		t.dropped += over
		t.tail = append(t.tail[:0], t.tail[over:]...)
	}
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped > 0 {
		return string(t.head) + fmt.Sprintf("\n[... %d bytes ...]\n", t.dropped) + string(t.tail)
	}
	return string(t.head) + string(t.tail)
}

// seqInput writes the job ids 1..n, one per line.
func seqInput(n int) func(io.Writer) error {
	return func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		var buf []byte
		for i := 1; i <= n; i++ {
			buf = strconv.AppendInt(buf[:0], int64(i), 10)
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
		return bw.Flush()
	}
}
