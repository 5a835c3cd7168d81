package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errNoCgroup says the harness cannot build its per-contender cgroups.
var errNoCgroup = errors.New("no cgroup with the cpu and memory controllers found: neither cgroup v1 (cpu and memory hierarchies) nor a cgroup v2 mount")

// hierarchy is the harness's own place in the cgroups it makes children
// of. On cgroup v1 (or hybrid), dirs maps a controller (cpu, cpuacct,
// memory) to the directory of the cgroup this process is in; cpu and
// cpuacct share a directory when they are co-mounted. On cgroup v2, unified
// is this process's cgroup directory and dirs is empty.
type hierarchy struct {
	dirs    map[string]string
	unified string
}

// ownHierarchy finds the harness's own cgroups from /proc/self/mountinfo
// and /proc/self/cgroup: cgroup v1 when the cpu and memory controllers are
// mounted there (v1 or hybrid), else cgroup v2.
func ownHierarchy() (*hierarchy, error) {
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read own cgroup: %w", err)
	}
	return findHierarchy(string(mountinfo), string(own))
}

// findHierarchy is ownHierarchy on the contents of mountinfo and
// /proc/self/cgroup. cpuacct is optional on v1 (only CPU usage is read
// from it).
func findHierarchy(mountinfo, own string) (*hierarchy, error) {
	v1, v2 := cgroupMounts(mountinfo)
	h := &hierarchy{dirs: map[string]string{}}
	var unifiedRel string
	for _, line := range strings.Split(strings.TrimSpace(own), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unifiedRel = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if m, ok := v1[c]; ok {
				h.dirs[c] = m.join(parts[2])
			}
		}
	}
	if h.dirs["cpu"] != "" && h.dirs["memory"] != "" {
		return h, nil
	}
	if v2.dir != "" && unifiedRel != "" {
		return &hierarchy{unified: v2.join(unifiedRel)}, nil
	}
	return nil, errNoCgroup
}

type mount struct{ dir, root string }

// join maps a path from /proc/self/cgroup into the mount. A mount of a
// non-root part of the hierarchy (cgroup namespaces, bind mounts) shows
// paths relative to its root.
func (m mount) join(rel string) string {
	if m.root != "/" {
		rel = strings.TrimPrefix(rel, m.root)
	}
	return filepath.Join(m.dir, rel)
}

// cgroupMounts lists the v1 mounts of cpu, cpuacct and memory and the v2
// mount (the first one) in a mountinfo text.
func cgroupMounts(mountinfo string) (v1 map[string]mount, v2 mount) {
	v1 = map[string]mount{}
	for _, line := range strings.Split(mountinfo, "\n") {
		// id parent maj:min root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 1 {
			continue
		}
		m := mount{dir: unescapeMount(pf[4]), root: unescapeMount(pf[3])}
		switch {
		case qf[0] == "cgroup2" && v2.dir == "":
			v2 = m
		case qf[0] == "cgroup" && len(qf) >= 3:
			for _, opt := range strings.Split(qf[2], ",") {
				switch opt {
				case "cpu", "cpuacct", "memory":
					v1[opt] = m
				}
			}
		}
	}
	return v1, v2
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// prepare makes the harness's own cgroup able to have children with CPU and
// memory limits and returns what undoes it. On v1 there is nothing to do.
// On v2 the cpu and memory controllers must be enabled in the own cgroup's
// cgroup.subtree_control, which the kernel refuses while that cgroup holds
// processes (unless it is the root): the processes in it (the harness and
// whoever started it) move into a leaf child first, within the same
// subtree, so every limit above still applies; restore moves them back.
// Moving is the one step the fixture tests cannot show: a plain file does
// not drop a pid written elsewhere.
func (h *hierarchy) prepare() (restore func() error, err error) {
	noop := func() error { return nil }
	if h.unified == "" {
		return noop, nil
	}
	have := strings.Fields(readString(filepath.Join(h.unified, "cgroup.controllers")))
	for _, c := range []string{"cpu", "memory"} {
		if !slices.Contains(have, c) {
			return nil, fmt.Errorf("cgroup v2: the %s controller is not available in %s (cgroup.controllers: %q); run the benchmark where it is delegated, e.g. sudo systemd-run --scope -p Delegate=yes make bench", c, h.unified, strings.Join(have, " "))
		}
	}
	enabled := strings.Fields(readString(filepath.Join(h.unified, "cgroup.subtree_control")))
	var add []string
	for _, c := range []string{"cpu", "memory"} {
		if !slices.Contains(enabled, c) {
			add = append(add, c)
		}
	}
	if len(add) == 0 {
		return noop, nil
	}
	// Only the root cgroup may hold processes and enable controllers; it is
	// the one without a cgroup.type file. (A cgroup namespace's root, as in
	// a container, is not the root: its processes must move.)
	var leaf string
	if fileExists(filepath.Join(h.unified, "cgroup.type")) {
		leaf = filepath.Join(h.unified, fmt.Sprintf("ration-bench-%d-procs", os.Getpid()))
		if err := os.Mkdir(leaf, 0o755); err != nil {
			return nil, fmt.Errorf("cgroup v2: create %s: %w", leaf, err)
		}
		if err := movePids(h.unified, leaf); err != nil {
			_ = movePids(leaf, h.unified)
			_ = syscall.Rmdir(leaf)
			return nil, err
		}
	}
	restore = func() error {
		var errs []error
		for _, c := range add {
			if err := writeFile(filepath.Join(h.unified, "cgroup.subtree_control"), "-"+c); err != nil {
				errs = append(errs, err)
			}
		}
		if leaf != "" {
			if err := movePids(leaf, h.unified); err != nil {
				errs = append(errs, err)
			}
			if err := syscall.Rmdir(leaf); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("remove %s: %w", leaf, err))
			}
		}
		return errors.Join(errs...)
	}
	for _, c := range add {
		if err := writeFile(filepath.Join(h.unified, "cgroup.subtree_control"), "+"+c); err != nil {
			return nil, errors.Join(err, restore())
		}
	}
	return restore, nil
}

// movePids moves every process of cgroup from into cgroup to, until none
// is left (a process may fork while it is moved).
func movePids(from, to string) error {
	for range 100 {
		pids := readPids(filepath.Join(from, "cgroup.procs"))
		if len(pids) == 0 {
			return nil
		}
		for _, p := range pids {
			if err := writeFile(filepath.Join(to, "cgroup.procs"), strconv.Itoa(p)); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("cgroup v2: move process %d to %s: %w", p, to, err)
			}
		}
	}
	return fmt.Errorf("cgroup v2: processes keep appearing in %s", from)
}

// file names the file (or file and key) behind a measurement, in the
// cgroup version this hierarchy is, for the result texts.
func (h *hierarchy) file(v1, v2 string) string {
	if h.unified != "" {
		return v2
	}
	return v1
}

// cgroup is one child cgroup made for one contender run: on v1 a
// directory per controller, on v2 one directory (cpu, cpuacct and memory
// all name it).
type cgroup struct {
	name                 string
	v2                   bool
	cpu, cpuacct, memory string
}

// child is the cgroup called name under h, not yet created.
func (h *hierarchy) child(name string) *cgroup {
	if h.unified != "" {
		d := filepath.Join(h.unified, name)
		return &cgroup{name: name, v2: true, cpu: d, cpuacct: d, memory: d}
	}
	cg := &cgroup{name: name, cpu: filepath.Join(h.dirs["cpu"], name), memory: filepath.Join(h.dirs["memory"], name)}
	if d := h.dirs["cpuacct"]; d != "" {
		cg.cpuacct = filepath.Join(d, name)
	}
	return cg
}

// newChild creates a fresh child cgroup called name under the harness's own
// cgroups. cpuQuota is in CPUs (0: no quota); memLimit in bytes (0: none).
// On v2 swap is also closed to the cgroup (memory.swap.max 0, where the
// kernel has it), so a job over the limit is OOM-killed as on a swapless
// v1 host rather than slowed down by swapping.
func (h *hierarchy) newChild(name string, cpuQuota float64, memLimit int64) (*cgroup, error) {
	cg := h.child(name)
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
		var err error
		if cg.v2 {
			err = writeFile(filepath.Join(cg.memory, "memory.max"), strconv.FormatInt(memLimit, 10))
			if swap := filepath.Join(cg.memory, "memory.swap.max"); err == nil && fileExists(swap) {
				err = writeFile(swap, "0")
			}
		} else {
			err = writeFile(filepath.Join(cg.memory, "memory.limit_in_bytes"), strconv.FormatInt(memLimit, 10))
		}
		if err != nil {
			cg.remove()
			return nil, err
		}
	}
	return cg, nil
}

// dirs lists the distinct directories of the cgroup (on v1 cpu and cpuacct
// may be one; on v2 there is only one).
func (cg *cgroup) dirs() []string {
	var ds []string
	for _, d := range []string{cg.cpu, cg.cpuacct, cg.memory} {
		if d != "" && !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	return ds
}

// setQuota sets the CPU quota in CPUs with a 100 ms period; 0 removes it.
func (cg *cgroup) setQuota(cpus float64) error {
	if cg.v2 {
		q := "max"
		if cpus > 0 {
			q = strconv.Itoa(int(cpus * 100000))
		}
		return writeFile(filepath.Join(cg.cpu, "cpu.max"), q+" 100000")
	}
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
		if kill := filepath.Join(d, "cgroup.kill"); cg.v2 && fileExists(kill) {
			_ = writeFile(kill, "1") // v2, Linux 5.14+: the kernel kills them all, also ones forking now
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

// cgStats is what a contender's cgroup recorded over its run. Names are
// v1's; the v2 source is in brackets.
type cgStats struct {
	PeakMem       int64         // memory.max_usage_in_bytes [memory.peak; -1 before Linux 5.19]
	FailCnt       int64         // memory.failcnt: times the limit was hit [max in memory.events]
	OOMKills      int64         // oom_kill in memory.oom_control [oom_kill in memory.events]
	NrPeriods     int64         // cpu.stat
	NrThrottled   int64         // cpu.stat
	ThrottledTime time.Duration // cpu.stat throttled_time [throttled_usec]
	CPUUsage      time.Duration // cpuacct.usage, 0 when cpuacct is absent [usage_usec in cpu.stat]
}

func (cg *cgroup) stats() cgStats {
	var s cgStats
	cs := readKV(filepath.Join(cg.cpu, "cpu.stat"))
	s.NrPeriods, s.NrThrottled = cs["nr_periods"], cs["nr_throttled"]
	if cg.v2 {
		s.PeakMem = readInt(filepath.Join(cg.memory, "memory.peak"))
		ev := readKV(filepath.Join(cg.memory, "memory.events"))
		s.FailCnt, s.OOMKills = ev["max"], ev["oom_kill"]
		s.ThrottledTime = time.Duration(cs["throttled_usec"]) * time.Microsecond
		s.CPUUsage = time.Duration(cs["usage_usec"]) * time.Microsecond
		return s
	}
	s.PeakMem = readInt(filepath.Join(cg.memory, "memory.max_usage_in_bytes"))
	s.FailCnt = readInt(filepath.Join(cg.memory, "memory.failcnt"))
	oc := readKV(filepath.Join(cg.memory, "memory.oom_control"))
	s.OOMKills = oc["oom_kill"]
	s.ThrottledTime = time.Duration(cs["throttled_time"])
	if cg.cpuacct != "" {
		s.CPUUsage = time.Duration(readInt(filepath.Join(cg.cpuacct, "cpuacct.usage")))
	}
	return s
}

// watchOOMKillsBelow starts polling the oom_kill counters of the cgroups
// below cg's memory cgroup, and returns the function that stops it and
// sums the most each one reached. cgroup v1 does not count a child's
// kills in its parent, and ration runs its jobs in a child cgroup that it
// removes when it ends (package internal/jobcgroup); v2 counts them in the
// parent's memory.events, so there it returns 0.
func (cg *cgroup) watchOOMKillsBelow() (stop func() int64) {
	if cg.v2 {
		return func() int64 { return 0 }
	}
	seen := map[string]int64{}
	poll := func() {
		_ = filepath.WalkDir(cg.memory, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || path == cg.memory {
				return nil
			}
			if n, ok := readKV(filepath.Join(path, "memory.oom_control"))["oom_kill"]; ok {
				seen[path] = max(seen[path], n)
			}
			return nil
		})
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			poll()
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(quit)
		<-done
		poll()
		var n int64
		for _, c := range seen {
			n += c
		}
		return n
	}
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

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func writeFile(path, s string) error {
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// removeStale removes cgroups left by an earlier harness that died hard
// (SIGKILL): children named ration-bench-PID-* whose PID is gone. A v2
// leaf of moved processes (ration-bench-PID-procs) is left alone: its
// processes are alive and belong to whoever started that harness.
func (h *hierarchy) removeStale() {
	parents := []string{h.unified}
	if h.unified == "" {
		parents = nil
		for _, d := range h.dirs {
			parents = append(parents, d)
		}
	}
	seen := map[string]bool{}
	for _, d := range parents {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			n := e.Name()
			if !e.IsDir() || !strings.HasPrefix(n, "ration-bench-") || strings.HasSuffix(n, "-procs") || seen[n] {
				continue
			}
			pidStr, _, _ := strings.Cut(strings.TrimPrefix(n, "ration-bench-"), "-")
			pid, err := strconv.Atoi(pidStr)
			if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
				continue
			}
			seen[n] = true
			if err := h.child(n).remove(); err == nil {
				fmt.Fprintf(os.Stderr, "bench: removed stale cgroup %s\n", n)
			}
		}
	}
}
