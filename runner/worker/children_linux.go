package worker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shirou/gopsutil/v4/process"
)

// childrenOf returns p's child processes from the kernel's own lists
// (/proc/PID/task/TID/children, one per thread, as any thread may fork).
// gopsutil's Children reads the stat file of every process on the machine
// instead, for every process of the tree, after every task: its cost grew
// with the host's process count, and each read holds that process's
// memory for its length (see memory.GroupRSSOf). Without those lists (a
// kernel built without CONFIG_PROC_CHILDREN) it falls back to gopsutil.
func childrenOf(p *process.Process) ([]*process.Process, error) {
	if _, err := os.Stat("/proc/thread-self/children"); err != nil {
		return p.Children()
	}
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(int(p.Pid)), "task", "*", "children"))
	if err != nil {
		return nil, err
	}
	var kids []*process.Process
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited
		}
		for _, field := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(field); err == nil {
				kids = append(kids, &process.Process{Pid: int32(pid)})
			}
		}
	}
	return kids, nil
}
