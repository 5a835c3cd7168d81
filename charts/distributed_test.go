package charts

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestDistributedRunSimulated runs what the chart deploys, on one machine:
// N ration processes over one file set, each told its shard the way an
// Indexed Job tells a pod (JOB_COMPLETION_INDEX, RATION_SHARD_COUNT), each in
// its own child CPU cgroup with its own quota, as each pod has its own
// limits.cpu. It checks that
//   - each process sizes itself from its own quota,
//   - every input lands in the shard FNV-1a 64 of its bytes mod N names,
//   - the joblogs together cover every input exactly once,
//   - a shard SIGTERMed mid-run exits 143 (a pod exiting 0 would count as a
//     finished index and lose its remaining inputs), and its rerun with
//     --resume runs exactly the inputs it had not done.
func TestDistributedRunSimulated(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds ration and runs 2,000 jobs")
	}
	files := scaledDown(2000, 200)
	const (
		shards   = 4
		victim   = 0 // the shard that is interrupted: the smallest quota, so the slowest
		jobSleep = "0.01"
	)
	// CPU quota per shard, in µs per 100ms period: 0.5, 1, 1.5 and 2 CPUs.
	quotas := [shards]int64{50_000, 100_000, 150_000, 200_000}

	cpuRoot := childCgroupParent(t)
	bin := buildRation(t)
	known := runFlags(t, bin)
	for _, flag := range []string{"--shard", "--resume", "--joblog", "--term-timeout", "--files", "--no-bar"} {
		if !known[flag] {
			t.Skipf("ration run has no %s flag yet; the distributed run cannot be simulated", flag)
		}
	}

	dir := t.TempDir()
	var all []string
	for i := range files {
		rel := filepath.Join("in", fmt.Sprintf("d%d", i%7), fmt.Sprintf("f%04d.txt", i))
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(strconv.Itoa(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		all = append(all, rel)
	}

	cgs := make([]string, shards)
	for i := range shards {
		cgs[i] = makeCPUCgroup(t, cpuRoot, fmt.Sprintf("ration-dist-%d-shard-%d", os.Getpid(), i), quotas[i])
	}

	// Each process sizes itself from its own cgroup's quota.
	for i := range shards {
		out, err := inCgroup(t, cgs[i], dir, shardEnv(i, shards), bin, "limits", "--json").Output()
		if err != nil {
			t.Fatalf("shard %d: ration limits: %v", i, err)
		}
		want := fmt.Sprintf(`"cpu_quota": %s,`, strconv.FormatFloat(float64(quotas[i])/100_000, 'f', -1, 64))
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("shard %d: ration limits --json does not report its quota (%s):\n%s", i, want, out)
		}
	}

	joblog := func(i int) string { return filepath.Join(dir, fmt.Sprintf("joblog-%d.tsv", i)) }
	runArgs := func(i int, extra ...string) []string {
		a := []string{"run", "--files", "in/**", "--joblog", joblog(i), "--no-bar", "--term-timeout", "60s"}
		a = append(a, extra...)
		return append(a, "--", "sh", "-c", "sleep "+jobSleep, "sh")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	type result struct {
		code   int
		stderr string
	}
	results := make([]result, shards)
	var wg sync.WaitGroup
	cmds := make([]*exec.Cmd, shards)
	for i := range shards {
		cmd := inCgroup(t, cgs[i], dir, shardEnv(i, shards), bin, runArgs(i)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
		wg.Go(func() {
			results[i] = result{exitCode(cmd.Wait()), stderr.String()}
		})
	}
	// SIGTERM the victim once it has done some jobs, long before its end.
	var interruptedAt int
	for {
		n := len(readJoblog(t, joblog(victim)))
		if n >= 20 {
			interruptedAt = n
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the victim shard never got going")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmds[victim].Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	for i, r := range results {
		want := 0
		if i == victim {
			want = 143
		}
		if r.code != want {
			t.Errorf("shard %d exited %d, want %d\n%s", i, r.code, want, r.stderr)
		}
	}
	victimDone := readJoblog(t, joblog(victim))
	share := 0
	for _, in := range all {
		if shardOf(in, shards) == victim {
			share++
		}
	}
	if len(victimDone) < interruptedAt || len(victimDone) >= share {
		t.Fatalf("interrupted shard recorded %d of its %d inputs, want at least %d and not all", len(victimDone), share, interruptedAt)
	}
	t.Logf("shard %d interrupted after %d of %d inputs: %s", victim, len(victimDone), share, strings.TrimSpace(results[victim].stderr))

	// The rerun, as the Job controller would start a replacement pod.
	rerun := inCgroup(t, cgs[victim], dir, shardEnv(victim, shards), bin, runArgs(victim, "--resume")...)
	var stderr bytes.Buffer
	rerun.Stderr = &stderr
	if code := exitCode(rerun.Run()); code != 0 {
		t.Fatalf("rerun with --resume exited %d\n%s", code, stderr.String())
	}
	t.Logf("rerun: %s", strings.TrimSpace(stderr.String()))

	// Union over the joblogs: every input exactly once, succeeded, in the
	// shard the documented rule names.
	seen := make(map[string]int, files)
	for i := range shards {
		for _, e := range readJoblog(t, joblog(i)) {
			if e.exitval != 0 || e.signal != 0 {
				t.Errorf("shard %d: %s ended with exit %d signal %d", i, e.input, e.exitval, e.signal)
			}
			if s := shardOf(e.input, shards); s != i {
				t.Errorf("%s ran in shard %d, but FNV-1a 64 mod %d puts it in %d", e.input, i, shards, s)
			}
			seen[e.input]++
		}
	}
	for _, in := range all {
		if n := seen[in]; n != 1 {
			t.Errorf("%s ran %d times, want exactly once", in, n)
		}
		delete(seen, in)
	}
	for in := range seen {
		t.Errorf("joblogs name %q, which is not an input", in)
	}
}

// shardOf is the documented rule, computed independently of ration.
func shardOf(input string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(input))
	return int(h.Sum64() % uint64(n))
}

func shardEnv(i, n int) []string {
	return []string{"JOB_COMPLETION_INDEX=" + strconv.Itoa(i), "RATION_SHARD_COUNT=" + strconv.Itoa(n)}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal()) // killed, not exited: never 143
		}
		return ee.ExitCode()
	default:
		return -1000
	}
}

// scaledDown returns n divided by $RATION_TEST_TIMESCALE (how many times
// slower than a real machine the test's CPUs are, as in the emulated v2
// lane), but not below least: the same checks on less work.
func scaledDown(n, least int) int {
	s, err := strconv.Atoi(os.Getenv("RATION_TEST_TIMESCALE"))
	if err != nil || s <= 1 {
		return n
	}
	return max(least, n/s)
}

// prebuiltEnv names the directory of commands built beforehand, for
// running the compiled tests on a machine without a Go toolchain (as
// internal/testutil.PrebuiltEnv, which this module cannot import).
const prebuiltEnv = "RATION_TEST_PREBUILT"

// buildRation builds the ration binary from the repository root, or
// returns $RATION_TEST_PREBUILT/ration when that variable is set.
func buildRation(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv(prebuiltEnv); dir != "" {
		bin := filepath.Join(dir, "ration")
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%s is set but has no ration: %v", prebuiltEnv, err)
		}
		return bin
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go") // go test sets GOROOT
	}
	bin := filepath.Join(t.TempDir(), "ration")
	build := exec.Command(goBin, "build", "-o", bin, "./cmd/ration")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ration: %v\n%s", err, out)
	}
	return bin
}

// runFlags returns the flags `ration run --help` lists, long ("--files")
// and short ("-j").
func runFlags(t *testing.T, bin string) map[string]bool {
	t.Helper()
	help, err := exec.Command(bin, "run", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("ration run --help: %v\n%s", err, help)
	}
	flags := make(map[string]bool)
	for _, line := range strings.Split(string(help), "\n") {
		// "  -j, --jobs N   ..." or "      --bar   ...": the flag names
		// lead the line.
		f := strings.Fields(line)
		for i := 0; i < len(f) && i < 2 && strings.HasPrefix(f[i], "-"); i++ {
			flags[strings.TrimSuffix(f[i], ",")] = true
		}
	}
	return flags
}

// childCgroupParent returns the directory of this process's own cpu
// cgroup, v1 or v2, below which the test creates its cgroups, or skips
// when that is not possible (not root, no writable cpu controller). On v2
// it first makes the directory able to give its children a cpu.max (see
// delegateCPU).
func childCgroupParent(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root")
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	// A v1 cpu controller wins over the v2 hierarchy, as in package cgroup
	// (a hybrid host's unified hierarchy then has no cpu controller).
	var v1Path, v2Path string
	for _, line := range strings.Split(string(self), "\n") {
		f := strings.SplitN(line, ":", 3)
		switch {
		case len(f) != 3:
		case slices.Contains(strings.Split(f[1], ","), "cpu"):
			v1Path = f[2]
		case f[0] == "0" && f[1] == "":
			v2Path = f[2]
		}
	}
	var dir string
	switch {
	case v1Path != "":
		dir = cgroupMountDir(t, "cgroup", v1Path)
	case v2Path != "":
		dir = cgroupMountDir(t, "cgroup2", v2Path)
		if ctrl, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers")); !slices.Contains(strings.Fields(string(ctrl)), "cpu") {
			t.Skipf("cgroup v2: the cpu controller is not available in %s (cgroup.controllers %q)", dir, strings.TrimSpace(string(ctrl)))
		}
	default:
		t.Skip("this process is in no cpu cgroup (neither a v1 cpu controller nor cgroup v2)")
	}
	probe := filepath.Join(dir, fmt.Sprintf("ration-probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		t.Skipf("cpu cgroup %s is not writable: %v", dir, err)
	}
	if err := os.Remove(probe); err != nil {
		t.Fatal(err)
	}
	if v1Path == "" {
		delegateCPU(t, dir)
	}
	return dir
}

// cgroupMountDir returns the directory of the cgroup path (as
// /proc/self/cgroup writes it) under a mount of fsType ("cgroup" with the
// cpu option for v1, "cgroup2") whose root it lies below, or skips.
func cgroupMountDir(t *testing.T, fsType, path string) string {
	t.Helper()
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Skip(err)
	}
	for _, line := range strings.Split(string(mi), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		pf, sf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(sf) < 3 || sf[0] != fsType {
			continue
		}
		if fsType == "cgroup" && !slices.Contains(strings.Split(sf[2], ","), "cpu") {
			continue
		}
		root, mnt := pf[3], pf[4]
		rel, ok := strings.CutPrefix(path, root)
		if !ok {
			continue
		}
		return filepath.Join(mnt, rel)
	}
	t.Skipf("no %s mount holds the cgroup %s", fsType, path)
	return ""
}

// delegateCPU lets the children of the cgroup v2 directory dir, this
// process's own cgroup, have cpu.max. v2 gives a controller to the
// children of a cgroup only when the cgroup enables it in
// cgroup.subtree_control, which the kernel refuses while the cgroup holds
// processes (the no-internal-process rule). So unless cpu is enabled
// already, the test process, which must be alone in dir, moves into a leaf
// child of dir and enables cpu in dir; the cleanups undo both. (This is
// what internal/testutil.ChildCgroup does, which this module cannot
// import.)
func delegateCPU(t *testing.T, dir string) {
	t.Helper()
	read := func(file string) []string {
		b, _ := os.ReadFile(filepath.Join(dir, file))
		return strings.Fields(string(b))
	}
	if slices.Contains(read("cgroup.subtree_control"), "cpu") {
		return
	}
	self := strconv.Itoa(os.Getpid())
	if procs := read("cgroup.procs"); len(procs) != 1 || procs[0] != self {
		t.Skipf("cgroup v2: %s holds other processes than this test (%v), so it cannot enable cpu for its children; run the test binary alone in a cgroup of its own", dir, procs)
	}
	leaf := filepath.Join(dir, fmt.Sprintf("ration-dist-%s-self", self))
	if err := os.Mkdir(leaf, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(self), 0o644); err != nil {
		_ = os.Remove(leaf)
		t.Fatalf("cgroup v2: moving the test into %s: %v", leaf, err)
	}
	// Runs last: the move back needs cpu disabled in dir again.
	t.Cleanup(func() {
		for range 100 {
			b, _ := os.ReadFile(filepath.Join(leaf, "cgroup.procs"))
			procs := strings.Fields(string(b))
			if len(procs) == 0 {
				break
			}
			for _, p := range procs {
				if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(p), 0o644); err != nil {
					t.Errorf("cgroup v2: moving %s back to %s: %v", p, dir, err)
					return
				}
			}
		}
		if err := os.Remove(leaf); err != nil {
			t.Errorf("cgroup v2: %v", err)
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+cpu"), 0o644); err != nil {
		t.Fatalf("cgroup v2: enabling cpu in %s: %v", dir, err)
	}
	// Runs after the shards' cgroups are gone (registered later).
	t.Cleanup(func() {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("-cpu"), 0o644); err != nil {
			t.Errorf("cgroup v2: disabling cpu in %s: %v", dir, err)
		}
	})
}

// makeCPUCgroup creates parent/name with the given CPU quota per 100ms
// (v1 cpu.cfs_quota_us, v2 cpu.max) and removes it at cleanup, killing any
// process of ours still in it.
func makeCPUCgroup(t *testing.T, parent, name string, quotaUs int64) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			pids := strings.Fields(string(b))
			for _, p := range pids {
				if pid, err := strconv.Atoi(p); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			err := os.Remove(dir)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("remove cgroup %s: %v", dir, err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	write := func(file, v string) {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.controllers")); err == nil {
		write("cpu.max", fmt.Sprintf("%d 100000", quotaUs))
		return dir
	}
	write("cpu.cfs_period_us", "100000")
	write("cpu.cfs_quota_us", strconv.FormatInt(quotaUs, 10))
	return dir
}

// inCgroup returns a command that moves itself into cgroup dir and then
// execs bin with args, so that ration and everything it starts are in the
// cgroup from the first instruction. The shell exec()s: the returned
// command's process is ration itself, and signals to it reach ration.
func inCgroup(t *testing.T, cgroup, workdir string, env []string, bin string, args ...string) *exec.Cmd {
	t.Helper()
	script := `echo $$ > "$0/cgroup.procs" && exec "$@"`
	cmd := exec.Command("sh", append([]string{"-c", script, cgroup, bin}, args...)...)
	cmd.Dir = workdir
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// jobEntry is one line of a joblog (GNU parallel's format).
type jobEntry struct {
	input           string
	exitval, signal int
}

// readJoblog reads the entries of a joblog, skipping the header lines; the
// input is the last word of the command (the test's names have no spaces).
func readJoblog(t *testing.T, path string) []jobEntry {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []jobEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "Seq\t") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 9 {
			continue // a line being written right now
		}
		exitval, err1 := strconv.Atoi(strings.TrimSpace(fields[6]))
		signal, err2 := strconv.Atoi(strings.TrimSpace(fields[7]))
		cmd := strings.Fields(fields[8])
		if err1 != nil || err2 != nil || len(cmd) == 0 {
			t.Fatalf("%s: malformed joblog line %q", path, line)
		}
		out = append(out, jobEntry{input: cmd[len(cmd)-1], exitval: exitval, signal: signal})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
