package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ration-run/ration/internal/template"
)

// shellName matches the first word of a process's command line that is a
// shell, as GNU parallel's parent_shell reads it ("bash", "-bash",
// "/bin/zsh", "busybox sh"); group 1 is the shell's name.
var shellName = regexp.MustCompile(`^(?:\S+/|busybox )?-?(ash|bash|bsd-csh|csh|dash|fdsh|fish|fizsh|ksh|ksh93|lksh|mksh|pdksh|posh|rbash|rc|rush|rzsh|sash|sh|static-sh|tcsh|yash|zsh)$`)

// posixShells are the shells whose quoting is POSIX's: --shell's scripts
// quote every value for them (template.Quote).
var posixShells = map[string]bool{"ash": true, "bash": true, "dash": true, "ksh": true, "ksh93": true, "lksh": true, "mksh": true,
	"pdksh": true, "posh": true, "rbash": true, "sh": true, "static-sh": true, "yash": true, "zsh": true}

// ParentShell is the shell of --shell by GNU parallel's rule, less
// PARALLEL_SHELL (plan reads it): the nearest ancestor of ration that is
// a shell (so bash functions exported with export -f reach the jobs), else
// $SHELL, else /bin/sh. Unlike GNU parallel, which quotes for csh and fish
// too, ration quotes for POSIX shells only: a csh, tcsh, fish or rc found
// that way gives /bin/sh.
func ParentShell(getenv func(string) string) string {
	pid := os.Getppid()
	for range 64 {
		if pid <= 1 {
			break
		}
		if sh := shellOf(pid); sh != "" {
			if !posixShells[filepath.Base(sh)] {
				return template.ShellPath
			}
			return sh
		}
		ppid, err := parentPID(pid)
		if err != nil {
			break
		}
		pid = ppid
	}
	if sh := getenv("SHELL"); sh != "" && posixShells[filepath.Base(sh)] {
		return sh
	}
	return template.ShellPath
}

// shellOf returns the path of the shell process pid runs, "" when it runs
// no shell (or /proc cannot tell).
func shellOf(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	arg0, _, _ := strings.Cut(string(b), "\x00")
	m := shellName.FindStringSubmatch(arg0)
	if m == nil {
		return ""
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && filepath.Base(exe) == m[1] {
		return exe
	}
	if p, err := exec.LookPath(m[1]); err == nil {
		return p
	}
	return ""
}

// parentPID reads the parent of pid from /proc/PID/stat (the field after
// the command name, which may hold spaces and parentheses).
func parentPID(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	return strconv.Atoi(f[1])
}
