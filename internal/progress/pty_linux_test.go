package progress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/event"
)

// drainedMark is what wait writes on the terminal after everything the
// test wrote: once the master has read it, it has read all that came
// before, in order.
const drainedMark = "\x00pty drained\x00"

// openPTY opens a pseudo-terminal pair and starts copying what the
// terminal shows (the master side) into a buffer. The returned wait
// writes drainedMark, waits until the master has read it, closes the
// test's slave and returns the text written before the mark.
//
// wait does not rely on the master's reads after the last slave closes:
// Linux then answers EIO, and under load (make test's packages side by
// side, -race) an EIO came before the last line written was read.
func openPTY(t *testing.T) (slave *os.File, wait func() string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		buf     bytes.Buffer
		drained = make(chan struct{})
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		p := make([]byte, 32<<10)
		seen := false
		for {
			n, err := master.Read(p)
			mu.Lock()
			from := max(0, buf.Len()-len(drainedMark))
			buf.Write(p[:n])
			if !seen && bytes.Contains(buf.Bytes()[from:], []byte(drainedMark)) {
				seen = true
				close(drained)
			}
			mu.Unlock()
			if err != nil {
				if !errors.Is(err, syscall.EIO) { // EIO: every slave closed
					t.Errorf("read pty: %v", err)
				}
				return
			}
		}
	}()
	var (
		once sync.Once
		text string
	)
	wait = func() string {
		once.Do(func() {
			if _, err := io.WriteString(slave, drainedMark); err != nil {
				t.Errorf("write the drained mark: %v", err)
			}
			select {
			case <-drained:
			case <-time.After(30 * time.Second):
				t.Errorf("the terminal did not read what was written on it within 30 s")
			}
			slave.Close()
			<-done
			mu.Lock()
			defer mu.Unlock()
			text, _, _ = strings.Cut(buf.String(), drainedMark)
		})
		return text
	}
	t.Cleanup(func() { wait() })
	return slave, wait
}

// TestPTYRedrawsWhileIdle: on a real terminal the bar redraws at least
// four times a second while no job finishes, and the elapsed time moves.
// The bar's clock is a synctest bubble's, so that its ticks come on time
// however loaded the machine: a tick 50 ms late drew "1.1s" where the
// test looks for "1s" (2 of 100 runs beside 3 busy loops on 2 CPUs). The
// terminal is real: the copy from it runs outside the bubble.
func TestPTYRedrawsWhileIdle(t *testing.T) {
	tty, wait := openPTY(t)
	synctest.Test(t, func(t *testing.T) {
		b := New(tty, Options{Terminal: true, Total: 3})
		b.Observe(event.Event{Kind: event.JobStarted, Attempt: 1})
		b.Start()
		time.Sleep(1100 * time.Millisecond)
		b.Finish()
	})
	out := wait()
	draws := strings.Count(out, clearLine+"ration: [")
	if draws < 1+4 { // one at the start, then at least four a second
		t.Errorf("%d redraws in 1.1 s without events:\n%q", draws, out)
	}
	if !strings.Contains(out, "0/3   0%, 0 failed, 1 running") || !strings.Contains(out, ", 1s, ETA ?") {
		t.Errorf("idle bar does not show the running job and the time:\n%q", out)
	}
	t.Logf("%d redraws in 1.1 s", draws)
}

// TestPTYOutputNeverOnBarLine writes job output through the wrapped
// terminal from several goroutines while the bar redraws every 2 ms.
func TestPTYOutputNeverOnBarLine(t *testing.T) {
	tty, wait := openPTY(t)
	b := New(tty, Options{Terminal: true, Total: 200, Interval: 2 * time.Millisecond})
	w := b.Wrap(tty)
	if w == io.Writer(tty) {
		t.Fatal("Wrap did not wrap a terminal")
	}
	b.Start()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				fmt.Fprintf(w, "out %d-%d\nout %d-%d second line\n", g, i, g, i)
				time.Sleep(time.Millisecond)
				b.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Succeeded})
			}
		})
	}
	wg.Wait()
	b.Finish()
	out := wait()
	if lines := checkScreen(t, out); len(lines) != 400 {
		t.Errorf("%d output lines, want 400", len(lines))
	}
	if n := strings.Count(out, clearLine+"ration: ["); n < 10 {
		t.Errorf("only %d redraws", n)
	}
}

// TestPTYRation runs the ration binary on a pseudo-terminal with --bar:
// each job's output line stands on a line of its own, never on the bar's.
func TestPTYRation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ration binary")
	}
	bin, err := testutil.BuildRation(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tty, wait := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "-j", "2", "--bar", "--shell", "sleep 0.3; echo out {}", ":::", "1", "2")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, tty, tty
	if err := cmd.Run(); err != nil {
		t.Fatalf("ration: %v\n%q", err, wait())
	}
	out := wait()
	lines := checkScreen(t, out)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "out ") || lines[0] == lines[1] {
		t.Errorf("output lines %q\n%q", lines, out)
	}
	if n := strings.Count(out, clearLine+"ration: ["); n < 2 {
		t.Errorf("the bar was drawn %d times in 0.3 s:\n%q", n, out)
	}
	if !strings.Contains(out, "2/2 100%") {
		t.Errorf("no final bar:\n%q", out)
	}
	t.Logf("terminal:\n%s", strings.Join(screen(out), "\n"))
}
