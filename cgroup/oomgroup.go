package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// OOMGroup reads memory.oom.group of the cgroup v2 directory dir: whether
// the kernel's OOM killer, when it picks a victim in dir or below, kills
// every process of dir with it (Kubernetes sets it on every container's
// cgroup since 1.28). A cgroup v1 directory, or a kernel before 4.19, has
// no such file: ok is false and err nil. A malformed file is an error
// naming it.
func OOMGroup(dir string) (on, ok bool, err error) {
	f := filepath.Join(dir, "memory.oom.group")
	b, err := os.ReadFile(f)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("cgroup: %w", err)
	}
	switch strings.TrimSpace(string(b)) {
	case "0":
		return false, true, nil
	case "1":
		return true, true, nil
	}
	return false, false, fmt.Errorf("cgroup: %s: want 0 or 1, got %q: %w", f, truncate(strings.TrimSpace(string(b))), errMalformed)
}
