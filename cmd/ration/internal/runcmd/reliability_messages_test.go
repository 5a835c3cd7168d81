//go:build linux

package runcmd

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReliabMessages (item 19): clear messages for a closed stdout, a NUL
// byte in newline-separated input, inputs read from a terminal, and a
// number out of range.
func TestReliabMessages(t *testing.T) {
	t.Parallel()
	t.Run("closed stdout", func(t *testing.T) {
		res := shRun(t, "sh", "-c", `exec "$0" run -- echo ::: a >&-`, buildRation(t))
		if !strings.Contains(res.stderr, "standard output") || !strings.Contains(res.stderr, "closed") {
			t.Errorf("exit %d, no word about the closed stdout:\n%s", res.code, res.stderr)
		}
	})
	t.Run("NUL in input", func(t *testing.T) {
		// As GNU parallel (and README, docs/reliability.md): the job runs
		// with the NUL as the two characters \0, and one warning names -0.
		r := rcmd{dir: t.TempDir(), stdin: strings.NewReader("a\x00b\n"), args: []string{"run", "--", "echo"}}.run(t)
		if r.code != 0 || r.stdout != "a\\0b\n" || !strings.Contains(r.stderr, "-0") {
			t.Errorf("exit %d, stdout %q, want 0 and %q, and a word about -0:\n%s", r.code, r.stdout, `a\0b`+"\n", r.stderr)
		}
	})
	t.Run("retries out of range", func(t *testing.T) {
		r := rcmd{dir: t.TempDir(), args: []string{"run", "--retries", "99999999999999999999", "--", "true", ":::", "a"}}.run(t)
		if r.code != exitUsage || strings.Contains(r.stderr, "strconv") || !strings.Contains(r.stderr, "--retries") ||
			!strings.Contains(r.stderr, "out of range") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("terminal stdin", func(t *testing.T) {
		master, slave := openPTY(t)
		cmd, out, errb := rcmd{dir: t.TempDir(), stdin: slave, args: []string{"run", "--", "echo"}}.start(t)
		slave.Close()
		if _, err := master.WriteString("a\n\x04"); err != nil {
			t.Fatal(err)
		}
		r := waitRation(t, cmd, out, errb, 20*time.Second)
		master.Close()
		if r.code != 0 || !strings.Contains(r.stderr, "terminal") || !strings.Contains(r.stderr, "Ctrl-D") {
			t.Errorf("exit %d, no hint about the terminal:\n%s", r.code, r.stderr)
		}
	})
}

// shRun runs argv (a shell that execs ration) and returns how it ended.
func shRun(t *testing.T, argv ...string) rres {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return rres{code: code, stdout: out.String(), stderr: errb.String()}
}

// openPTY opens a pseudo-terminal pair.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminals:", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skip("unlockpt:", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skip("ptsname:", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skip("open the pty:", err)
	}
	return m, s
}
