//go:build !unix

package cgroup

// openNonblock is 0 where there are no FIFOs to wait for.
const openNonblock = 0
