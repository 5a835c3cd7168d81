//go:build v2lane

package v2lane

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestCgroupV2 checks the lane's premise: a pure cgroup v2 hierarchy with
// the controllers ration reads.
func TestCgroupV2(t *testing.T) {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/sys/fs/cgroup", &st); err != nil {
		t.Fatal(err)
	}
	const cgroup2Magic = 0x63677270
	if st.Type != cgroup2Magic {
		t.Fatalf("/sys/fs/cgroup is not cgroup2 (magic %#x)", st.Type)
	}
	b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
	if err != nil {
		t.Fatal(err)
	}
	have := strings.Fields(string(b))
	for _, c := range []string{"cpu", "cpuset", "memory", "pids"} {
		if !strings.Contains(" "+string(b)+" ", " "+c+" ") {
			t.Errorf("controller %s missing: %v", c, have)
		}
	}
	t.Logf("cgroup2 controllers: %s", strings.Join(have, " "))
}
