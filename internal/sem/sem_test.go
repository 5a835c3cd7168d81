//go:build unix

package sem

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// helperEnv makes the test binary a holder process (see TestMain).
const helperEnv = "RATION_SEM_TEST_HELPER"

// TestMain runs the helper processes the tests start: "hold DIR N"
// acquires a slot of the semaphore in DIR with N slots, says "held" on
// stdout and holds it until killed; "loop DIR N ROUNDS" acquires and
// releases ROUNDS times, each time checking through marker files that
// at most N processes hold a slot, and exits 1 after a violation;
// "inherit" holds the slot passed as file 3 until killed.
func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(strings.Fields(mode)))
	}
	goleak.VerifyTestMain(m)
}

func helper(args []string) int {
	ctx := context.Background()
	switch args[0] {
	case "hold":
		n, _ := strconv.Atoi(args[2])
		s, err := Open(args[1], Options{Poll: 5 * time.Millisecond})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if _, err := s.Acquire(ctx, n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Println("held")
		// A sleep, not select {}: with no goroutine left that could wake
		// it, the runtime would abort a bare select as a deadlock (and
		// free the slot) before the test kills the holder.
		for {
			time.Sleep(time.Hour)
		}
	case "loop":
		n, _ := strconv.Atoi(args[2])
		rounds, _ := strconv.Atoi(args[3])
		s, err := Open(args[1], Options{Poll: 2 * time.Millisecond})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		marks := filepath.Join(args[1], "..", "marks")
		for i := range rounds {
			slot, err := s.Acquire(ctx, n)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			mark := filepath.Join(marks, fmt.Sprintf("%d.%d", os.Getpid(), i))
			if err := os.WriteFile(mark, nil, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			ents, _ := os.ReadDir(marks)
			if len(ents) > n {
				fmt.Fprintf(os.Stderr, "%d holders with %d slots\n", len(ents), n)
				return 1
			}
			time.Sleep(time.Millisecond)
			os.Remove(mark)
			slot.Release()
		}
		return 0
	case "inherit":
		fmt.Println("held")
		// A sleep, not select {}: with no goroutine left that could wake
		// it, the runtime would abort a bare select as a deadlock (and
		// free the slot) before the test kills the holder.
		for {
			time.Sleep(time.Hour)
		}
	}
	return 2
}

// startHolder starts a helper process in mode and waits for its "held".
func startHolder(t *testing.T, mode string, extra ...*os.File) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.ExtraFiles = extra
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "held\n" {
		t.Fatalf("helper %s: %q, %v", mode, line, err)
	}
	return cmd
}

func open(t *testing.T, dir string) *Semaphore {
	t.Helper()
	s, err := Open(dir, Options{Poll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func holders(t *testing.T, s *Semaphore) int {
	t.Helper()
	n, err := s.Holders()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAcquireCountsHolders: n slots can be held at once, the next
// Acquire waits until one is released, and ends with ctx.
func TestAcquireCountsHolders(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "sem"))
	ctx := context.Background()
	a, err := s.Acquire(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Acquire(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n := holders(t, s); n != 2 {
		t.Errorf("%d holders, want 2", n)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if c, err := s.Acquire(short, 2); !errors.Is(err, context.DeadlineExceeded) || c != nil {
		t.Fatalf("third Acquire of 2: %v, %v; want the deadline", c, err)
	}
	if n := holders(t, s); n != 2 {
		t.Errorf("after a failed Acquire: %d holders, want 2", n)
	}
	got := make(chan error, 1)
	go func() {
		c, err := s.Acquire(ctx, 2)
		if err == nil {
			err = c.Release()
		}
		got <- err
	}()
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := b.Release(); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if n := holders(t, s); n != 0 {
		t.Errorf("%d holders after every release, want 0", n)
	}
	if _, err := s.Acquire(ctx, 0); err == nil {
		t.Error("Acquire of 0 slots: no error")
	}
}

// TestDeadHolderReleases: a holder process killed with SIGKILL (no
// cleanup of its own) leaves no count behind.
func TestDeadHolderReleases(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sem")
	h := startHolder(t, "hold "+dir+" 1")
	s := open(t, dir)
	if n := holders(t, s); n != 1 {
		t.Fatalf("%d holders, want the helper", n)
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Acquire(short, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire while the helper holds the only slot: %v", err)
	}
	if err := h.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.Wait()
	ctx, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	slot, err := s.Acquire(ctx, 1)
	if err != nil {
		t.Fatalf("Acquire after the holder died: %v", err)
	}
	slot.Release()
}

// TestNoMoreThanNHolders: processes and goroutines that acquire and
// release over and over never hold more than n slots together.
func TestNoMoreThanNHolders(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sem")
	if err := os.Mkdir(filepath.Join(root, "marks"), 0o755); err != nil {
		t.Fatal(err)
	}
	const n, procs, rounds = 2, 4, 30
	var wg sync.WaitGroup
	errs := make(chan error, procs+2)
	for range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=loop %s %d %d", helperEnv, dir, n, rounds))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("helper: %v: %s", err, out)
			}
		})
	}
	// And goroutines of this process, which share the count too.
	for range 2 {
		wg.Go(func() {
			if code := helper([]string{"loop", dir, strconv.Itoa(n), strconv.Itoa(rounds)}); code != 0 {
				errs <- fmt.Errorf("goroutine: exit %d", code)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestStealAndWait: Steal takes a slot beyond n; Wait returns once fewer
// than n are held and holds none.
func TestStealAndWait(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "sem"))
	ctx := context.Background()
	a, err := s.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Steal()
	if err != nil {
		t.Fatal(err)
	}
	if n := holders(t, s); n != 2 {
		t.Errorf("%d holders after Steal, want 2", n)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait(ctx, 1) }()
	select {
	case err := <-done:
		t.Fatalf("Wait returned while 2 slots are held: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	a.Release()
	b.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := holders(t, s); n != 0 {
		t.Errorf("%d holders after Wait, want 0", n)
	}
}

// TestInheritedSlotStaysHeld: a child that inherited the slot's file
// holds it after the parent released it, until the child dies.
func TestInheritedSlotStaysHeld(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "sem"))
	slot, err := s.Acquire(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	child := startHolder(t, "inherit", slot.File())
	slot.Release()
	if n := holders(t, s); n != 1 {
		t.Errorf("%d holders while the child holds the inherited slot, want 1", n)
	}
	child.Process.Kill()
	child.Wait()
	if n := holders(t, s); n != 0 {
		t.Errorf("%d holders after the child died, want 0", n)
	}
}

// TestDir: any id is one file name.
func TestDir(t *testing.T) {
	for id, want := range map[string]string{
		"my_id":      "ration-id-my_id",
		"not a tty":  "ration-id-not20a20tty",
		"/dev/pts/3": "ration-id-2fdev2fpts2f3",
		"":           "ration-id-",
	} {
		if got := Dir("/b", id); got != "/b/"+want {
			t.Errorf("Dir(%q) = %s, want /b/%s", id, got, want)
		}
	}
}
