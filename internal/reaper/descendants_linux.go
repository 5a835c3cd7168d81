package reaper

import (
	"os"
	"strconv"
	"syscall"
	"time"
)

// KillDescendants SIGKILLs every live process descended from this one
// (children, their children, and orphans reparented here as a subreaper),
// in any session or process group, until none is left or d has passed,
// and returns how many it killed. Processes in their own session
// (setsid) or process group escape a kill of the jobs' and workers'
// groups; as a subreaper (Options.Subreaper) ration is their ancestor
// whatever their parents did, so nothing a job or worker started is left
// once it returns. It does nothing when /proc belongs to another PID
// namespace, where its PIDs would name other processes. Call it once the
// run's own children were waited for: it kills them too.
func (r *Reaper) KillDescendants(d time.Duration) int {
	self := os.Getpid()
	if procSelfPid() != self {
		return 0
	}
	killed := map[int]bool{}
	deadline := time.Now().Add(d)
	for {
		live := descendants(self)
		for _, pid := range live {
			if !killed[pid] {
				killed[pid] = true
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if len(live) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r.active {
		select { // the killed orphans are the loop's to collect
		case r.kick <- struct{}{}:
		default:
		}
	}
	return len(killed)
}

// descendants returns the live (not zombie) processes below pid in the
// process tree, read from /proc.
func descendants(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	state := map[int]byte{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(p)
		if err != nil {
			continue
		}
		children[st.ppid] = append(children[st.ppid], p)
		state[p] = st.state
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			queue = append(queue, c)
			if state[c] != 'Z' {
				out = append(out, c)
			}
		}
	}
	return out
}
