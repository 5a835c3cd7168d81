//go:build v2lane

package v2lane

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const cgroupRoot = "/sys/fs/cgroup"

// lane returns the directory of the commands lane.sh built, and skips
// the test outside the lane's VM: the scenarios make cgroups at the root
// of the hierarchy, which only a throwaway VM may.
func lane(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("V2LANE_BIN")
	if bin == "" || os.Getpid() == 1 {
		t.Skip("runs only inside the v2 lane's VM (test/v2lane/lane.sh)")
	}
	return bin
}

// runtime returns the OCI runtime the scenarios start containers with:
// $V2LANE_RUNTIME, else runc (containerd's default), else crun.
func runtime(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("V2LANE_RUNTIME"), "runc", "crun"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no OCI runtime (runc or crun) installed")
	return ""
}

// pod is a Kubernetes pod's cgroup, a child of the root like kubelet's
// kubepods slice, with the pod-level limits (cgroup file -> value).
type pod struct {
	dir string
}

func newPod(t *testing.T, name string, files map[string]string) *pod {
	t.Helper()
	dir := filepath.Join(cgroupRoot, fmt.Sprintf("v2lane-%s-%d", name, os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCgroup(t, dir) })
	write(t, filepath.Join(dir, "cgroup.subtree_control"), "+cpu +cpuset +memory +pids")
	for f, v := range files {
		write(t, filepath.Join(dir, f), v)
	}
	return &pod{dir: dir}
}

// removeCgroup kills what is left in dir and removes it and its children.
func removeCgroup(t *testing.T, dir string) {
	_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0o644)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var dirs []string
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		var err error
		for i := len(dirs) - 1; i >= 0; i-- {
			if e := os.Remove(dirs[i]); e != nil && !os.IsNotExist(e) {
				err = e
			}
		}
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("removing %s: %v", dir, err)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func write(t *testing.T, path, value string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		t.Fatalf("writing %q to %s: %v", value, path, err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// events returns the counters of a cgroup's memory.events. They count the
// whole subtree, so a pod's count its container's after the runtime
// removed the container's cgroup.
func events(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for _, line := range strings.Split(read(t, filepath.Join(dir, "memory.events")), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok {
			m[k], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return m
}

// container is one container of a pod, started the way containerd starts
// an unprivileged one: own pid, mount, ipc, uts, network and cgroup
// namespaces, /sys/fs/cgroup read-only, UID/GID 65532, the default
// capability set, the container's CPU and memory limits in its cgroup
// and memory.oom.group=1 (kubelet >= 1.28 on cgroup v2).
type container struct {
	Name     string
	Pod      *pod
	CPUs     float64 // limits.cpu: cpu.max QUOTA 100000; 0: none
	Memory   int64   // limits.memory: memory.max; 0: none
	Cpuset   string  // cpuset.cpus; "": all
	OOMGroup bool    // memory.oom.group=1
	// Delegated gives the container a writable cgroupfs and its cgroup to
	// its user, as systemd's Delegate=yes does.
	Delegated bool
	Args      []string
	// Work is mounted read-write at /data, the command's directory.
	Work string

	bundle string
	rt, id string
	cmd    *exec.Cmd
	Stdout lockedBuffer
	Stderr lockedBuffer
}

// lockedBuffer is a bytes.Buffer that the runtime's output copier and the
// test may use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Bytes() []byte { return []byte(l.String()) }

// Cgroup returns the container's cgroup as the VM sees it.
func (c *container) Cgroup() string { return filepath.Join(c.Pod.dir, c.Name) }

// defaultCaps is containerd's default capability set (oci.defaultUnixCaps).
var defaultCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
	"CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
}

func (c *container) spec() map[string]any {
	cgroupOpts := []string{"nosuid", "noexec", "nodev", "relatime", "ro"}
	if c.Delegated {
		cgroupOpts[4] = "rw"
	}
	resources := map[string]any{}
	if c.CPUs > 0 {
		resources["cpu"] = map[string]any{"quota": int64(c.CPUs * 100_000), "period": 100_000}
	}
	if c.Cpuset != "" {
		cpu, _ := resources["cpu"].(map[string]any)
		if cpu == nil {
			cpu = map[string]any{}
		}
		cpu["cpus"] = c.Cpuset
		resources["cpu"] = cpu
	}
	if c.Memory > 0 {
		resources["memory"] = map[string]any{"limit": c.Memory}
	}
	if c.OOMGroup {
		resources["unified"] = map[string]string{"memory.oom.group": "1"}
	}
	caps := defaultCaps
	return map[string]any{
		"ociVersion": "1.0.2",
		"process": map[string]any{
			"user": map[string]any{"uid": 65532, "gid": 65532},
			"args": c.Args,
			"env":  []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/data"},
			"cwd":  "/data",
			"capabilities": map[string]any{
				"bounding": caps, "effective": caps, "permitted": caps,
			},
		},
		"root":     map[string]any{"path": "rootfs", "readonly": true},
		"hostname": c.Name,
		"mounts": []map[string]any{
			{"destination": "/proc", "type": "proc", "source": "proc", "options": []string{"nosuid", "noexec", "nodev"}},
			{"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
			{"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
			{"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": []string{"nosuid", "noexec", "nodev"}},
			{"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": []string{"nosuid", "noexec", "nodev", "ro"}},
			{"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": cgroupOpts},
			{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "nodev", "mode=1777"}},
			{"destination": "/data", "type": "bind", "source": c.Work, "options": []string{"rbind", "rw"}},
		},
		"linux": map[string]any{
			"cgroupsPath": filepath.Join(strings.TrimPrefix(c.Pod.dir, cgroupRoot), c.Name),
			"resources":   resources,
			"namespaces": []map[string]string{
				{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "network"}, {"type": "cgroup"},
			},
			"maskedPaths": []string{
				"/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
				"/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi",
			},
			"readonlyPaths": []string{
				"/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
			},
		},
	}
}

// start starts the container with `RUNTIME run`, which returns the
// container's exit status; wait waits for it.
func (c *container) start(t *testing.T) {
	t.Helper()
	c.rt = runtime(t)
	if c.Work == "" {
		c.Work = t.TempDir()
	}
	if err := os.Chmod(c.Work, 0o777); err != nil {
		t.Fatal(err)
	}
	c.bundle = t.TempDir()
	rootfs := filepath.Join(c.bundle, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	// The VM's own root (the host's userland), without the mounts below it.
	if err := syscall.Mount("/", rootfs, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(rootfs, syscall.MNT_DETACH) })
	b, err := json.MarshalIndent(c.spec(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.bundle, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if c.Delegated {
		// systemd's Delegate=yes: the cgroup and the files that manage its
		// subtree belong to the container's user. The runtime uses the
		// cgroup it finds.
		if err := os.Mkdir(c.Cgroup(), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
			if err := os.Chown(filepath.Join(c.Cgroup(), f), 65532, 65532); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.id = fmt.Sprintf("%s-%d", c.Name, os.Getpid())
	c.cmd = exec.Command(c.rt, "run", "--bundle", c.bundle, c.id)
	c.cmd.Stdout, c.cmd.Stderr = &c.Stdout, &c.Stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command(c.rt, "delete", "--force", c.id).Run()
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
	})
}

// wait waits at most d for the container to exit and returns its exit
// status (128+N for a signal N, as a container runtime reports it).
func (c *container) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		t.Fatalf("%s run: %v", c.rt, err)
	case <-time.After(d):
		_ = exec.Command(c.rt, "kill", c.id, "KILL").Run()
		<-done
		t.Fatalf("container %s still running after %v; stderr:\n%s", c.Name, d, c.Stderr.String())
	}
	return -1
}

// run starts the container and waits for it.
func (c *container) run(t *testing.T, d time.Duration) int {
	t.Helper()
	c.start(t)
	return c.wait(t, d)
}

// signal sends sig to the container's init, as kubelet does at a pod's
// termination.
func (c *container) signal(t *testing.T, sig string) {
	t.Helper()
	if out, err := exec.Command(c.rt, "kill", c.id, sig).CombinedOutput(); err != nil {
		t.Fatalf("%s kill %s: %v\n%s", c.rt, sig, err, out)
	}
}
