package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOOMKills(t *testing.T) {
	n, err := OOMKills("testdata/v1/sys/fs/cgroup/memory/ration-test", 1)
	if err != nil || n != 3 {
		t.Errorf("v1: %d, %v; want 3", n, err)
	}
	n, err = OOMKills("testdata/v2/sys/fs/cgroup/system.slice/app.service", 2)
	if err != nil || n != 1 {
		t.Errorf("v2: %d, %v; want 1", n, err)
	}
	if _, err := OOMKills("testdata/v2/sys/fs/cgroup/nowhere", 2); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v, want fs.ErrNotExist", err)
	}
	root := copyTree(t, "testdata/v2")
	f := filepath.Join(root, "sys/fs/cgroup/system.slice/app.service/memory.events")
	must(t, os.WriteFile(f, []byte("oom_kill many\n"), 0o644))
	if _, err := OOMKills(filepath.Dir(f), 2); err == nil || !strings.Contains(err.Error(), f) {
		t.Errorf("malformed: %v, want an error naming %s", err, f)
	}
	s, err := Reader{}.Read()
	if err == nil && s.MemoryDir != "" {
		if n, err := OOMKills(s.MemoryDir, s.MemoryVersion); err != nil || n < s.OOMKills { // the counter only grows
			t.Errorf("live: %d, %v; Read said %d", n, err, s.OOMKills)
		}
	}
}
