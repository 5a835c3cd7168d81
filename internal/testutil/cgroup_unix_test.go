//go:build unix

package testutil

import "testing"

func TestCgroupPath(t *testing.T) {
	for _, tt := range []struct{ own, ownDir, dir, want string }{
		{"/app", "/sys/fs/cgroup/memory/app", "/sys/fs/cgroup/memory/app/t1", "/app/t1"},               // v1: a child
		{"/app/self", "/sys/fs/cgroup/app/self", "/sys/fs/cgroup/app/t1", "/app/t1"},                   // v2: the leaf's sibling
		{"/", "/sys/fs/cgroup", "/sys/fs/cgroup/t1", "/t1"},                                            // the root
		{"/../../init.scope", "/sys/fs/cgroup", "/sys/fs/cgroup/t1", "/../../init.scope/t1"},           // outside the namespace
		{"/../../init.scope/self", "/sys/fs/cgroup/self", "/sys/fs/cgroup/t1", "/../../init.scope/t1"}, // both
		{"/app", "/sys/fs/cgroup/app", "/sys/fs/cgroup/app", "/app"},
	} {
		if got := CgroupPath(tt.own, tt.ownDir, tt.dir); got != tt.want {
			t.Errorf("CgroupPath(%q, %q, %q) = %q, want %q", tt.own, tt.ownDir, tt.dir, got, tt.want)
		}
	}
}
