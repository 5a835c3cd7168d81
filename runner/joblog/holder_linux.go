package joblog

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// holder names the process that holds the flock on f, from /proc/locks,
// which lists each flock with its owner's pid and the file's device and
// inode:
//
//	1: FLOCK  ADVISORY  WRITE 25211 fe:00:9978102 0 EOF
//
// A holder in another pid namespace is shown as pid 0 there, and named as
// unknown here.
func holder(f *os.File) string {
	const unknown = "held by another process"
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return unknown
	}
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, st.Ino)
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		return unknown
	}
	sc := bufio.NewScanner(bytes.NewReader(locks))
	for sc.Scan() {
		// id: FLOCK ADVISORY WRITE pid maj:min:ino start end; waiters
		// have "->" after the id and are not holders.
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil || pid <= 0 {
			return unknown
		}
		return describe(pid)
	}
	return unknown
}

// describe names process pid with its command line, when it can be read.
func describe(pid int) string {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	args := strings.Fields(strings.ReplaceAll(string(cmdline), "\x00", " "))
	if err != nil || len(args) == 0 {
		return fmt.Sprintf("held by process %d", pid)
	}
	cmd := strings.Join(args, " ")
	if len(cmd) > 120 {
		cmd = cmd[:117] + "..."
	}
	return fmt.Sprintf("held by process %d: %s", pid, cmd)
}
