//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package logs

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TIOCGETA
