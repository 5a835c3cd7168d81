package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errNoCgroupV1 says the harness cannot build its per-contender cgroups.
var errNoCgroupV1 = errors.New("cgroup v1 cpu and memory controllers not found (this harness needs cgroup v1 or hybrid; v2-only hosts are not supported yet)")

// hierarchy is the harness's own place in the cgroup v1 controllers it uses:
// dirs maps a controller (cpu, cpuacct, memory) to the directory of the
// cgroup this process is in. cpu and cpuacct share a directory when they
// are co-mounted.
type hierarchy struct {
	dirs map[string]string
}

// ownHierarchy reads /proc/self/mountinfo and /proc/self/cgroup to find the
// harness's own cgroups for cpu, cpuacct and memory. cpuacct is optional
// (only CPU usage is read from it).
func ownHierarchy() (*hierarchy, error) {
	mounts, err := v1Mounts()
	if err != nil {
		return nil, err
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read own cgroup: %w", err)
	}
	h := &hierarchy{dirs: map[string]string{}}
	for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || parts[1] == "" {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			m, ok := mounts[c]
			if !ok {
				continue
			}
			rel := parts[2]
			// A mount of a non-root part of the hierarchy (cgroup namespaces,
			// bind mounts) shows paths relative to its root.
			if m.root != "/" {
				rel = strings.TrimPrefix(rel, m.root)
			}
			h.dirs[c] = filepath.Join(m.dir, rel)
		}
	}
	if h.dirs["cpu"] == "" || h.dirs["memory"] == "" {
		return nil, errNoCgroupV1
	}
	return h, nil
}

type mount struct{ dir, root string }

func v1Mounts() (map[string]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	defer f.Close()
	out := map[string]mount{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 || qf[0] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(qf[2], ",") {
			switch opt {
			case "cpu", "cpuacct", "memory":
				out[opt] = mount{dir: pf[4], root: pf[3]}
			}
		}
	}
	return out, sc.Err()
}

// cgroup is one child cgroup made for one contender run, with a directory
// per controller.
type cgroup struct {
	name                 string
	cpu, cpuacct, memory string
}

// newChild creates a fresh child cgroup called name under the harness's own
// cgroups. cpuQuota is in CPUs (0: no quota); memLimit in bytes (0: none).
func (h *hierarchy) newChild(name string, cpuQuota float64, memLimit int64) (*cgroup, error) {
	cg := &cgroup{name: name, cpu: filepath.Join(h.dirs["cpu"], name), memory: filepath.Join(h.dirs["memory"], name)}
	if d := h.dirs["cpuacct"]; d != "" {
		cg.cpuacct = filepath.Join(d, name)
	}
	for _, d := range cg.dirs() {
		if err := os.Mkdir(d, 0o755); err != nil {
			cg.remove()
			return nil, fmt.Errorf("create cgroup: %w", err)
		}
	}
	if err := cg.setQuota(cpuQuota); err != nil {
		cg.remove()
		return nil, err
	}
	if memLimit > 0 {
		if err := writeFile(filepath.Join(cg.memory, "memory.limit_in_bytes"), strconv.FormatInt(memLimit, 10)); err != nil {
			cg.remove()
			return nil, err
		}
	}
	return cg, nil
}

// dirs lists the distinct directories of the cgroup (cpu and cpuacct may be one).
func (cg *cgroup) dirs() []string {
	ds := []string{cg.cpu}
	if cg.cpuacct != "" && cg.cpuacct != cg.cpu {
		ds = append(ds, cg.cpuacct)
	}
	return append(ds, cg.memory)
}

// setQuota sets the CFS quota in CPUs with a 100 ms period; 0 removes it.
func (cg *cgroup) setQuota(cpus float64) error {
	if err := writeFile(filepath.Join(cg.cpu, "cpu.cfs_period_us"), "100000"); err != nil {
		return err
	}
	q := "-1"
	if cpus > 0 {
		q = strconv.Itoa(int(cpus * 100000))
	}
	return writeFile(filepath.Join(cg.cpu, "cpu.cfs_quota_us"), q)
}

// wrap returns argv that starts args inside the cgroup: a shell writes its
// own pid into every controller's cgroup.procs and then execs args, so the
// contender and everything it starts are accounted from their first
// instruction.
func (cg *cgroup) wrap(args []string) []string {
	script := `for f in "$@"; do case $f in --) shift; break;; esac; echo $$ > "$f" || exit 126; shift; done; exec "$@"`
	out := []string{"/bin/sh", "-c", script, "sh"}
	for _, d := range cg.dirs() {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	out = append(out, "--")
	return append(out, args...)
}

// remove kills every task left in the cgroup and removes its directories.
// It is safe to call more than once and on a half-built cgroup.
func (cg *cgroup) remove() error {
	var errs []error
	for _, d := range cg.dirs() {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			continue
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			tasks := readPids(filepath.Join(d, "cgroup.procs"))
			if len(tasks) == 0 {
				break
			}
			for _, p := range tasks {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("cgroup %s: %d tasks would not die", d, len(tasks)))
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		var err error
		for range 50 { // rmdir fails with EBUSY while the last task exits
			if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
				err = nil
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

func readPids(path string) []int {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// cgStats is what a contender's cgroup recorded over its run.
type cgStats struct {
	PeakMem       int64         // memory.max_usage_in_bytes
	FailCnt       int64         // memory.failcnt: times the limit was hit
	OOMKills      int64         // oom_kill in memory.oom_control
	NrPeriods     int64         // cpu.stat
	NrThrottled   int64         // cpu.stat
	ThrottledTime time.Duration // cpu.stat throttled_time
	CPUUsage      time.Duration // cpuacct.usage (0 when cpuacct is absent)
}

func (cg *cgroup) stats() cgStats {
	var s cgStats
	s.PeakMem = readInt(filepath.Join(cg.memory, "memory.max_usage_in_bytes"))
	s.FailCnt = readInt(filepath.Join(cg.memory, "memory.failcnt"))
	oc := readKV(filepath.Join(cg.memory, "memory.oom_control"))
	s.OOMKills = oc["oom_kill"]
	cs := readKV(filepath.Join(cg.cpu, "cpu.stat"))
	s.NrPeriods, s.NrThrottled = cs["nr_periods"], cs["nr_throttled"]
	s.ThrottledTime = time.Duration(cs["throttled_time"])
	if cg.cpuacct != "" {
		s.CPUUsage = time.Duration(readInt(filepath.Join(cg.cpuacct, "cpuacct.usage")))
	}
	return s
}

func readInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func readKV(path string) map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}

func writeFile(path, s string) error {
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// removeStale removes cgroups left by an earlier harness that died hard
// (SIGKILL): children named ration-bench-PID-* whose PID is gone.
func (h *hierarchy) removeStale() {
	seen := map[string]bool{}
	for _, d := range h.dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			n := e.Name()
			if !e.IsDir() || !strings.HasPrefix(n, "ration-bench-") || seen[n] {
				continue
			}
			pidStr, _, _ := strings.Cut(strings.TrimPrefix(n, "ration-bench-"), "-")
			pid, err := strconv.Atoi(pidStr)
			if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
				continue
			}
			seen[n] = true
			cg := &cgroup{name: n, cpu: filepath.Join(h.dirs["cpu"], n), memory: filepath.Join(h.dirs["memory"], n)}
			if a := h.dirs["cpuacct"]; a != "" {
				cg.cpuacct = filepath.Join(a, n)
			}
			if err := cg.remove(); err == nil {
				fmt.Fprintf(os.Stderr, "bench: removed stale cgroup %s\n", n)
			}
		}
	}
}
