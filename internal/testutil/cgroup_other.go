//go:build !unix

package testutil

import "testing"

// ChildCgroup skips the test: there are no cgroups on this system.
func ChildCgroup(t testing.TB, controller string) (dir string, version int) {
	t.Helper()
	t.Skip("no cgroups on this system")
	return "", 0
}

// ChildCgroupOf skips the test: there are no cgroups on this system.
func ChildCgroupOf(t testing.TB, parent string) string {
	t.Helper()
	t.Skip("no cgroups on this system")
	return ""
}

// RemoveCgroup does nothing: there are no cgroups on this system.
func RemoveCgroup(t testing.TB, dir string) {}

// MemoryCgroup skips the test: there are no cgroups on this system.
func MemoryCgroup(t testing.TB, limit int64) (dir string, version int) {
	t.Helper()
	t.Skip("no cgroups on this system")
	return "", 0
}

// CgroupVersion is 0: there are no cgroups on this system.
func CgroupVersion(dir string) int { return 0 }

// SetMemoryLimit fails t: there are no cgroups on this system.
func SetMemoryLimit(t testing.TB, dir string, limit int64) {
	t.Helper()
	t.Fatal("no cgroups on this system")
}

// SetCPUQuota fails t: there are no cgroups on this system.
func SetCPUQuota(t testing.TB, dir string, cpus float64) {
	t.Helper()
	t.Fatal("no cgroups on this system")
}

// OOMKills fails t: there are no cgroups on this system.
func OOMKills(t testing.TB, dir string) int {
	t.Helper()
	t.Fatal("no cgroups on this system")
	return -1
}

// CgroupPath is dir: there are no cgroups on this system.
func CgroupPath(own, ownDir, dir string) string { return dir }

// EnableControllers does nothing: there are no cgroups on this system.
func EnableControllers(t testing.TB, dir string) {}

// DelegateCgroups does nothing: there are no cgroups on this system.
func DelegateCgroups() (undo func()) { return func() {} }
