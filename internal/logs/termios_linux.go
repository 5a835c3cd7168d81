//go:build linux

package logs

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TCGETS
