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
