//go:build v2lane

package v2lane

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// limitsIn runs `ration limits --json ARGS` in c and returns the decision.
func limitsIn(t *testing.T, c *container, args ...string) map[string]any {
	t.Helper()
	bin := lane(t)
	c.Args = append([]string{filepath.Join(bin, "ration"), "limits", "--json"}, args...)
	if code := c.run(t, 2*time.Minute); code != 0 {
		t.Fatalf("ration limits exit %d; stderr:\n%s", code, c.Stderr.String())
	}
	var m map[string]any
	if err := json.Unmarshal(c.Stdout.Bytes(), &m); err != nil {
		t.Fatalf("ration limits --json: %v\n%s", err, c.Stdout.String())
	}
	t.Logf("ration limits: jobs %v, decided by %v: %v", m["jobs"], m["decided_by"], m["reason"])
	return m
}

// expect reports want against got for key and fails t when they differ.
func expect(t *testing.T, m map[string]any, key string, want any) {
	t.Helper()
	got := m[key]
	t.Logf("%s: expected %v, saw %v", key, want, got)
	if got != want {
		t.Errorf("%s %v, want %v", key, got, want)
	}
}

// TestLimitsContainerQuota: limits.cpu 1.5 gives 3 jobs, decided by the
// container's own cpu.max.
func TestLimitsContainerQuota(t *testing.T) {
	c := &container{Name: "quota", Pod: newPod(t, "quota", nil), CPUs: 1.5, Memory: 512 << 20, OOMGroup: true}
	m := limitsIn(t, c)
	expect(t, m, "jobs", 3.0)
	expect(t, m, "decided_by", "cpu_quota")
	expect(t, m, "cpu_quota", 1.5)
}

// TestLimitsPodQuota: a CPU limit on the pod only (Kubernetes' pod-level
// resources), the container none. From the pod's cgroup, where the
// hierarchy is visible, ration finds the pod's quota; inside the
// container's cgroup namespace the pod's cgroup lies above the mount
// root, and ration must say that it cannot see there.
func TestLimitsPodQuota(t *testing.T) {
	bin := lane(t)
	p := newPod(t, "podquota", map[string]string{"cpu.max": "50000 100000"})
	t.Run("visible", func(t *testing.T) {
		leaf := filepath.Join(p.dir, "visible")
		if err := os.Mkdir(leaf, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", `echo $$ >"$0/cgroup.procs" && exec "$@"`, leaf, filepath.Join(bin, "ration"), "limits", "--json")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ration limits: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		t.Logf("ration limits: jobs %v: %v", m["jobs"], m["reason"])
		expect(t, m, "cpu_quota", 0.5)
		expect(t, m, "jobs", 1.0)
	})
	t.Run("namespace", func(t *testing.T) {
		c := &container{Name: "ctr", Pod: p, Memory: 512 << 20, OOMGroup: true}
		m := limitsIn(t, c)
		expect(t, m, "cpu_quota", nil)
		expect(t, m, "ancestors_hidden", true)
	})
}

// TestLimitsCpuset: a container pinned to one CPU (cpuset.cpus) gets 2 jobs.
func TestLimitsCpuset(t *testing.T) {
	c := &container{Name: "cpuset", Pod: newPod(t, "cpuset", nil), Cpuset: "1", Memory: 512 << 20, OOMGroup: true}
	m := limitsIn(t, c)
	expect(t, m, "effective_cpus", 1.0)
	expect(t, m, "jobs", 2.0)
	expect(t, m, "decided_by", "cpuset")
}

// TestLimitsMemoryPerJob: limits.memory 200Mi with --mem-per-job 50M caps
// the jobs at 0.9 x 200 MiB / 50 MiB = 3 although 2 CPUs allow 4.
func TestLimitsMemoryPerJob(t *testing.T) {
	c := &container{Name: "mem", Pod: newPod(t, "mem", nil), Memory: 200 << 20, OOMGroup: true}
	m := limitsIn(t, c, "--mem-per-job", "50MiB")
	expect(t, m, "memory_limit_bytes", float64(200<<20))
	expect(t, m, "jobs", 3.0)
	expect(t, m, "decided_by", "memory")
}
