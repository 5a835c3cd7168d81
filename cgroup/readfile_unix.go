//go:build unix

package cgroup

import "syscall"

// openNonblock keeps an open of a FIFO from waiting for its writer.
const openNonblock = syscall.O_NONBLOCK
