package reaper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// pid1HelperEnv makes the test binary run pid1Helper instead of the tests;
// TestReapsAsPID1 sets it on a copy of itself started in a new PID namespace.
const pid1HelperEnv = "RATION_REAPER_PID1_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(pid1HelperEnv) == "1" {
		if err := pid1Helper(); err != nil {
			fmt.Fprintln(os.Stderr, "pid1 helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// children lists this process's child processes by state (from /proc).
func children(t *testing.T) (zombies, live []int) {
	t.Helper()
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.ppid != self {
			continue
		}
		if st.state == 'Z' {
			zombies = append(zombies, pid)
		} else {
			live = append(live, pid)
		}
	}
	return zombies, live
}

// waitNoChildren waits until this process has no child process left, alive
// or zombie, and fails the test if a zombie remains after the deadline.
func waitNoChildren(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		zombies, live := children(t)
		if len(zombies) == 0 && len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("children left: zombies %v, live %v", zombies, live)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requireSubreaperAllowed skips when prctl(PR_SET_CHILD_SUBREAPER) cannot be
// used (it needs no privilege on Linux >= 3.4, so this is rare).
func requireSubreaperAllowed(t *testing.T) {
	t.Helper()
	if _, err := isSubreaper(); err != nil {
		t.Skipf("child subreaper not available: %v", err)
	}
}

// TestOrphansBecomeZombiesWithoutReaper checks the premise of the package:
// a subreaper that does not reap is left with zombie orphans. Without it the
// other tests could pass vacuously.
func TestOrphansBecomeZombiesWithoutReaper(t *testing.T) {
	requireSubreaperAllowed(t)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })

	cmd := exec.Command("sh", "-c", "sleep 0.1 & exit 0")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var zombies []int
	for len(zombies) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		zombies, _ = children(t)
	}
	for _, pid := range zombies {
		collect(pid)
	}
	if len(zombies) == 0 {
		t.Fatal("the orphaned sleep never became our zombie; the reaper tests would prove nothing")
	}
	waitNoChildren(t)
}

func TestReapsOrphans(t *testing.T) {
	requireSubreaperAllowed(t)
	r, err := New(t.Context(), Options{Subreaper: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if !r.Active() {
		t.Fatal("a subreaper Reaper must be active")
	}
	for range 5 {
		cmd := exec.Command("sh", "-c", "sleep 0.2 & sleep 0.1 & (sleep 0.05 &) ; exit 0")
		if err := r.Start(cmd); err != nil {
			t.Fatal(err)
		}
		if err := r.Wait(cmd); err != nil {
			t.Fatalf("direct child: %v", err)
		}
	}
	waitNoChildren(t)
}

// TestDirectChildKeepsExitStatus runs short-lived direct children, which
// exit before or while they are registered, alongside orphans whose exits
// wake the reaper, and checks that every Wait still sees the real status.
func TestDirectChildKeepsExitStatus(t *testing.T) {
	requireSubreaperAllowed(t)
	r, err := New(t.Context(), Options{Subreaper: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()

	const workers, rounds = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				code := (w*rounds + i) % 8
				script := fmt.Sprintf("exit %d", code)
				if i%2 == 0 {
					script = fmt.Sprintf("sleep 0.01 & exit %d", code)
				}
				cmd := exec.Command("sh", "-c", script)
				if err := r.Start(cmd); err != nil {
					errs <- err
					return
				}
				err := r.Wait(cmd)
				var ee *exec.ExitError
				switch {
				case code == 0 && err != nil:
					errs <- fmt.Errorf("%q: want success, got %w", script, err)
				case code != 0 && !errors.As(err, &ee):
					errs <- fmt.Errorf("%q: want exit status %d, got %v", script, code, err)
				case code != 0 && ee.ExitCode() != code:
					errs <- fmt.Errorf("%q: want exit status %d, got %d", script, code, ee.ExitCode())
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	waitNoChildren(t)
}

// TestUnregisteredChildIsReaped documents the contract: a child not started
// through the Reaper looks like an orphan and loses its exit status.
func TestUnregisteredChildIsReaped(t *testing.T) {
	requireSubreaperAllowed(t)
	r, err := New(t.Context(), Options{Subreaper: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()

	cmd := exec.Command("sh", "-c", "exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitNoChildren(t) // the reaper collects it on its SIGCHLD
	err = cmd.Wait()
	if !errors.Is(err, syscall.ECHILD) {
		t.Fatalf("Wait on a reaped unregistered child: got %v, want ECHILD", err)
	}
}

func TestInactiveWhenNotPID1(t *testing.T) {
	if os.Getpid() == 1 {
		t.Skip("running as PID 1")
	}
	was, err := isSubreaper()
	if err != nil {
		t.Skip(err)
	}
	if was {
		t.Skip("already a subreaper")
	}
	r, err := New(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Active() {
		t.Fatal("Reaper active although not PID 1 and no subreaper asked for")
	}
	cmd := exec.Command("sh", "-c", "exit 5")
	if err := r.Start(cmd); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := r.Wait(cmd); !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Fatalf("Wait: %v, want exit status 5", err)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
}

func TestStopEndsLoopAndRestoresSetting(t *testing.T) {
	requireSubreaperAllowed(t)
	ctx, cancel := context.WithCancel(t.Context())
	r, err := New(ctx, Options{Subreaper: true})
	if err != nil {
		t.Fatal(err)
	}
	cancel() // the loop ends; Stop must still work and not block
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := r.Stop(); err != nil {
		t.Fatal("second Stop:", err)
	}
	if on, err := isSubreaper(); err != nil || on {
		t.Fatalf("subreaper after Stop: %v, %v; want false", on, err)
	}
}

// TestReapsAsPID1 runs a copy of the test binary as PID 1 of a new PID
// namespace, the way ration runs as a container's entrypoint, where the
// Reaper must switch itself on without being asked.
func TestReapsAsPID1(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a new PID namespace needs root")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), pid1HelperEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Skipf("cannot create a PID namespace: %v", err)
		}
		t.Fatalf("pid1 helper failed: %v\n%s", err, out)
	}
}

// pid1Helper runs as PID 1 in its own PID namespace. /proc there still
// belongs to the parent namespace, so this also covers the Reaper without its
// /proc fallback.
func pid1Helper() error {
	if os.Getpid() != 1 {
		return fmt.Errorf("pid %d, want 1", os.Getpid())
	}
	r, err := New(context.Background(), Options{})
	if err != nil {
		return err
	}
	if !r.Active() {
		return errors.New("Reaper inactive as PID 1")
	}
	for i := range 10 {
		cmd := exec.Command("sh", "-c", "sleep 0.05 & (sleep 0.1 &) ; exit 9")
		if err := r.Start(cmd); err != nil {
			return err
		}
		var ee *exec.ExitError
		if err := r.Wait(cmd); !errors.As(err, &ee) || ee.ExitCode() != 9 {
			return fmt.Errorf("round %d: Wait: %v, want exit status 9", i, err)
		}
	}
	// Wait for the orphans to exit and be reaped: waitid ECHILD means no
	// child at all, alive or zombie, is left.
	deadline := time.Now().Add(15 * time.Second)
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if errors.Is(err, unix.ECHILD) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("children left after 15s (waitid: %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r.Stop()
}

// TestOrphanBehindUnwaitedChild covers an owned child that has exited but
// is not waited for yet: waitid may keep reporting it first, so an orphan that
// exits behind it must be found another way, and the owned child must keep
// its status until its owner waits.
func TestOrphanBehindUnwaitedChild(t *testing.T) {
	requireSubreaperAllowed(t)
	r, err := New(t.Context(), Options{Subreaper: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()

	// Which exited child waitid reports first depends on which OS thread
	// forked it and which one asks, so several rounds make the case where
	// the owned zombie hides the orphan all but certain.
	for range 5 {
		orphanBehindUnwaited(t, r)
	}
	waitNoChildren(t)
}

func orphanBehindUnwaited(t *testing.T, r *Reaper) {
	t.Helper()
	owned := exec.Command("sh", "-c", "exit 4")
	if err := r.Start(owned); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, err := readStat(owned.Process.Pid); err == nil && st.state == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("owned child never became a zombie")
		}
		time.Sleep(10 * time.Millisecond)
	}

	parent := exec.Command("sh", "-c", "sleep 0.1 & exit 0")
	if err := r.Start(parent); err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(parent); err != nil {
		t.Fatal(err)
	}
	// The orphaned sleep exits after 0.1s and must be reaped while the owned
	// zombie still waits for its owner.
	deadline = time.Now().Add(15 * time.Second)
	for {
		zombies, live := children(t)
		if len(live) == 0 && slices.Equal(zombies, []int{owned.Process.Pid}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("children left: zombies %v (owned %d), live %v", zombies, owned.Process.Pid, live)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var ee *exec.ExitError
	if err := r.Wait(owned); !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Fatalf("owned child: Wait = %v, want exit status 4", err)
	}
	waitNoChildren(t)
}
