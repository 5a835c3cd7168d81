package pool_test

// The test suite of golang.org/x/sync@v0.24.0's errgroup (errgroup_test.go
// and errgroup_example_md5all_test.go), ported to ration's API: a
// red team found ration's failures by running it, and it stays here as a
// guard. errgroup.WithContext is a Group on a pool; a Group with SetLimit
// is a pool of that size (Pool.Go and Pool.Wait, or a Group on it); SetLimit
// is Resize.

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// From golang.org/x/sync@v0.24.0 errgroup/errgroup_test.go, TestZeroGroup:
// a Group without context, with Go and Wait interleaved, returns the first
// error. Adapted: the zero errgroup.Group is Pool.Go plus Pool.Wait (ration's
// zero Group is not usable). Ration's Pool.Wait differs on purpose: it returns
// the first error since the previous Wait returned, not since the pool was
// made (a long-lived pool would otherwise report one failure forever), so
// each Wait here returns the error of the one task submitted since the last.
// The original's intent, the first error of several tasks, is kept by a last
// Wait for the whole case submitted at once; those tasks run concurrently,
// so "first" is any of the failures, and nil only if none failed.
func TestPeerErrgroupZeroGroup(t *testing.T) {
	err1 := errors.New("errgroup_test: 1")
	err2 := errors.New("errgroup_test: 2")

	cases := []struct {
		errs []error
	}{
		{errs: []error{}},
		{errs: []error{nil}},
		{errs: []error{err1}},
		{errs: []error{err1, nil}},
		{errs: []error{err1, nil, err2}},
	}

	p := newPool(t, 2)
	for _, tc := range cases {
		for i, err := range tc.errs {
			if gerr := p.Go(context.Background(), func(context.Context) error { return err }); gerr != nil {
				t.Fatalf("Go: %v", gerr)
			}
			if gErr := p.Wait(); gErr != err {
				t.Errorf("after Pool.Go(func() error { return err }) for err in %v\n"+
					"p.Wait() = %v; want %v (the error since the previous Wait)",
					tc.errs[:i+1], gErr, err)
			}
		}

		for _, err := range tc.errs {
			if gerr := p.Go(context.Background(), func(context.Context) error { return err }); gerr != nil {
				t.Fatalf("Go: %v", gerr)
			}
		}
		gErr := p.Wait()
		failed := slices.ContainsFunc(tc.errs, func(err error) bool { return err != nil })
		if (gErr == nil) == failed || (gErr != nil && !slices.Contains(tc.errs, gErr)) {
			t.Errorf("after Pool.Go for each err in %v at once\n"+
				"p.Wait() = %v; want one of the non-nil errors", tc.errs, gErr)
		}
	}
}

var errPeerDoom = errors.New("group_test: doomed")

// peerDoomCases are the cases TestWithContext and TestCancelCause share.
var peerDoomCases = []struct {
	errs []error
	want error
}{
	{want: nil},
	{errs: []error{nil}, want: nil},
	{errs: []error{errPeerDoom}, want: errPeerDoom},
	{errs: []error{errPeerDoom, nil}, want: errPeerDoom},
}

// runPeerDoomCase submits one task per error of errs to a new group on p,
// with submit, and returns the group's context and what its Wait returned.
func runPeerDoomCase(p *pool.Pool, errs []error, submit func(g *pool.Group, gctx context.Context, task func(context.Context) error)) (context.Context, error) {
	g, ctx := p.Group(context.Background())
	for _, err := range errs {
		submit(g, ctx, func(context.Context) error { return err })
	}
	return ctx, g.Wait()
}

// From golang.org/x/sync@v0.24.0 errgroup/errgroup_test.go, TestWithContext:
// Wait returns the first error, and the group's context is done after Wait.
// Adapted: errgroup.WithContext is Pool.Group on one shared pool.
func TestPeerErrgroupWithContext(t *testing.T) {
	p := newPool(t, 2)
	for _, tc := range peerDoomCases {
		ctx, err := runPeerDoomCase(p, tc.errs, func(g *pool.Group, _ context.Context, task func(context.Context) error) {
			g.Go(task)
		})
		if err != tc.want {
			t.Errorf("after Group.Go(func() error { return err }) for err in %v\n"+
				"g.Wait() = %v; want %v", tc.errs, err, tc.want)
		}

		canceled := false
		select {
		case <-ctx.Done():
			canceled = true
		default:
		}
		if !canceled {
			t.Errorf("after Group.Go(func() error { return err }) for err in %v\n"+
				"ctx.Done() was not closed", tc.errs)
		}
	}
}

// From golang.org/x/sync@v0.24.0 errgroup/errgroup_test.go, TestCancelCause:
// the group's context is canceled with the first error as its cause, or
// context.Canceled when Wait returns without one. Adapted: TryGo on a Group
// of a pool with a worker per task, so every TryGo finds an idle worker; it
// can still refuse a task once errPeerDoom has canceled the group's
// context (errgroup's TryGo does not look at the context, ration's documents
// that it returns false then), which the original's cases do not notice as
// they ignore TryGo's result: here a refusal is allowed only then.
func TestPeerErrgroupCancelCause(t *testing.T) {
	p := newPool(t, 2)
	for _, tc := range peerDoomCases {
		ctx, err := runPeerDoomCase(p, tc.errs, func(g *pool.Group, gctx context.Context, task func(context.Context) error) {
			if !g.TryGo(task) && context.Cause(gctx) != errPeerDoom {
				t.Errorf("for err in %v: TryGo with an idle worker and a live group = false", tc.errs)
			}
		})
		if err != tc.want {
			t.Errorf("after Group.TryGo(func() error { return err }) for err in %v\n"+
				"g.Wait() = %v; want %v", tc.errs, err, tc.want)
		}

		want := tc.want
		if want == nil {
			want = context.Canceled
		}
		if err := context.Cause(ctx); err != want {
			t.Errorf("after Group.TryGo(func() error { return err }) for err in %v\n"+
				"context.Cause(ctx) = %v; want %v", tc.errs, err, want)
		}
	}
}

// tryGoWaiter is what Pool and Group have in common, so that one body runs
// TestTryGo on both.
type tryGoWaiter interface {
	TryGo(task func(context.Context) error) bool
	Wait() error
}

// peerHeldTask returns a task that holds its worker until release is
// called. Release also runs when the test ends (before newPool's Close), so
// a failing test leaves no task behind.
func peerHeldTask(t *testing.T) (task func(context.Context) error, release func()) {
	gate := make(chan struct{})
	release = sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	return func(context.Context) error { <-gate; return nil }, release
}

// peerWait calls w.Wait, which must return nil, under a hang guard.
func peerWait(t *testing.T, w tryGoWaiter) {
	t.Helper()
	within(t, 10*time.Second, "Wait", func() {
		if err := w.Wait(); err != nil {
			t.Errorf("Wait = %v", err)
		}
	})
}

// From golang.org/x/sync@v0.24.0 errgroup/errgroup_test.go, TestTryGo: with
// a limit of 42, TryGo succeeds 42 times while those tasks run, then fails;
// it succeeds again once Wait returned; after SetLimit(1) it succeeds once,
// then fails; after SetLimit(0) it always fails. Adapted: the limit is the
// pool's size and SetLimit is Resize, on the pool's own TryGo and Wait and on
// Groups of the pool. A Group is waited for once (its context is done after
// Wait, and TryGo then refuses), so the group flavour takes a new Group after
// each Wait. The tasks wait on a gate instead of sending on a channel that a
// goroutine drains. Resize(0) means size 1 (documented: ration has no size
// 0, with which Go would block forever), so the last step holds the one
// worker busy and TryGo must fail 1<<10 times.
func TestPeerErrgroupTryGo(t *testing.T) {
	t.Run("pool", func(t *testing.T) {
		p := newPool(t, 42)
		testPeerErrgroupTryGo(t, p, func() tryGoWaiter { return p })
	})
	t.Run("group", func(t *testing.T) {
		p := newPool(t, 42)
		testPeerErrgroupTryGo(t, p, func() tryGoWaiter {
			g, _ := p.Group(context.Background())
			return g
		})
	})
}

func testPeerErrgroupTryGo(t *testing.T, p *pool.Pool, scope func() tryGoWaiter) {
	const n = 42
	g := scope()
	fn, release := peerHeldTask(t)
	for i := range n {
		if !g.TryGo(fn) {
			t.Fatalf("TryGo should succeed but got fail at %d-th call.", i)
		}
	}
	if g.TryGo(fn) {
		t.Fatalf("TryGo is expected to fail but succeeded.")
	}
	release()
	peerWait(t, g)

	g = scope()
	fn, release = peerHeldTask(t)
	if !g.TryGo(fn) {
		t.Fatalf("TryGo should success but got fail after all goroutines.")
	}
	release()
	peerWait(t, g)

	// Switch limit.
	p.Resize(1)
	g = scope()
	fn, release = peerHeldTask(t)
	if !g.TryGo(fn) {
		t.Fatalf("TryGo should success but got failed.")
	}
	if g.TryGo(fn) {
		t.Fatalf("TryGo should fail but succeeded.")
	}
	release()
	peerWait(t, g)

	// Block all calls: the smallest pool has one worker, held here.
	p.Resize(0)
	if p.Size() != 1 {
		t.Fatalf("Size after Resize(0) = %d, want 1", p.Size())
	}
	g = scope()
	fn, release = peerHeldTask(t)
	if !g.TryGo(fn) {
		t.Fatalf("TryGo on the idle pool of 1 should succeed but failed.")
	}
	for range 1 << 10 {
		if g.TryGo(fn) {
			t.Fatalf("TryGo should fail but got succeeded.")
		}
	}
	release()
	peerWait(t, g)
}

// From golang.org/x/sync@v0.24.0 errgroup/errgroup_test.go, TestGoLimit:
// with a limit of 10, no more than 10 of 1025 tasks submitted with Go run at
// once. Adapted: the limit is the pool's size, and each task is submitted
// both with Pool.Go and through a Group on the same pool, so the bound is
// checked across the two kinds of submission together. runtime.Gosched
// replaces the original's 1µs sleep: both only give other tasks a chance
// to run at the same time.
func TestPeerErrgroupGoLimit(t *testing.T) {
	const limit = 10

	p := newPool(t, limit)
	g, _ := p.Group(context.Background())
	var active atomic.Int32
	task := func(context.Context) error {
		n := active.Add(1)
		defer active.Add(-1)
		if n > limit {
			return fmt.Errorf("saw %d active goroutines; want ≤ %d", n, limit)
		}
		runtime.Gosched()
		return nil
	}
	for i := 0; i <= 1<<10; i++ {
		if err := p.Go(context.Background(), task); err != nil {
			t.Fatal(err)
		}
		g.Go(task)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// From golang.org/x/sync@v0.24.0 errgroup/errgroup_test.go,
// ExampleGroup_justErrors: a Group in place of a sync.WaitGroup, fetching
// URLs; Wait waits for every fetch and returns an error if one failed.
// Adapted: the zero Group is Pool.Go plus Pool.Wait on a pool smaller than
// the number of URLs (so Go also queues and blocks); http.Get is a fake
// (no network here) that fails for the example's one bad host. The example
// prints only on success; here the failure is checked as well, and the
// second round also shows that Wait reports only what failed since the
// previous Wait (ration's documented difference, see TestPeerErrgroupZeroGroup).
func TestPeerErrgroupExampleGroupJustErrors(t *testing.T) {
	p := newPool(t, 2)
	errNoSuchHost := errors.New("dial tcp: lookup www.somestupidname.com: no such host")
	var fetched atomic.Int32
	httpGet := func(url string) error {
		fetched.Add(1)
		if url == "http://www.somestupidname.com/" {
			return errNoSuchHost
		}
		return nil
	}
	fetchAll := func(urls []string) error {
		for _, url := range urls {
			if err := p.Go(context.Background(), func(context.Context) error { return httpGet(url) }); err != nil {
				return err
			}
		}
		return p.Wait()
	}
	urls := []string{
		"http://www.golang.org/",
		"http://www.google.com/",
		"http://www.somestupidname.com/",
	}
	if err := fetchAll(urls); err != errNoSuchHost || fetched.Load() != 3 {
		t.Fatalf("fetching %v: Wait = %v after %d fetches, want the bad host's error after 3", urls, err, fetched.Load())
	}
	if err := fetchAll(urls[:2]); err != nil || fetched.Load() != 5 {
		t.Fatalf("fetching %v: Wait = %v after %d fetches, want nil after 5 (Successfully fetched all URLs.)", urls[:2], err, fetched.Load())
	}
}

type peerSearch func(ctx context.Context, query string) (string, error)

func fakePeerSearch(kind string) peerSearch {
	return func(_ context.Context, query string) (string, error) {
		return fmt.Sprintf("%s result for %q", kind, query), nil
	}
}

// peerGoogle is the example's Google, with one Group per query on a shared
// pool.
func peerGoogle(ctx context.Context, p *pool.Pool, query string, searches ...peerSearch) ([]string, error) {
	g, _ := p.Group(ctx)
	results := make([]string, len(searches))
	for i, search := range searches {
		g.Go(func(ctx context.Context) error {
			result, err := search(ctx, query)
			if err == nil {
				results[i] = result
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return results, nil
}

// From golang.org/x/sync@v0.24.0 errgroup/errgroup_test.go,
// ExampleGroup_parallel: "Google Search 2.0" runs the web, image and video
// searches in parallel and returns their results in order. Adapted:
// errgroup.WithContext is a Group on a pool with a worker per backend (a
// backend that waits for the group's context must not hold the only
// worker that the failing one needs), and each search gets the task's
// context. The example's error handling, which its output does not show, is
// checked too: when one backend fails, Google returns that error (not the
// context.Canceled of a backend that its failure canceled) and no results.
func TestPeerErrgroupExampleGroupParallel(t *testing.T) {
	p := newPool(t, 3)
	results, err := peerGoogle(context.Background(), p, "golang",
		fakePeerSearch("web"), fakePeerSearch("image"), fakePeerSearch("video"))
	want := []string{
		`web result for "golang"`,
		`image result for "golang"`,
		`video result for "golang"`,
	}
	if err != nil || !slices.Equal(results, want) {
		t.Fatalf("Google = %q, %v; want %q", results, err, want)
	}

	errDown := errors.New("image backend down")
	slow := func(ctx context.Context, _ string) (string, error) { <-ctx.Done(); return "", ctx.Err() }
	down := func(context.Context, string) (string, error) { return "", errDown }
	within(t, 10*time.Second, "Google with a failing backend", func() {
		results, err = peerGoogle(context.Background(), p, "golang", slow, down, fakePeerSearch("video"))
	})
	if err != errDown || results != nil {
		t.Fatalf("Google with a failing backend = %q, %v; want no results, %v", results, err, errDown)
	}
}

type peerMD5Result struct {
	path string
	sum  [md5.Size]byte
}

// peerMD5All is the example's MD5All on a Group of p: one task walks the
// tree and p.Size()-1 tasks digest the files it sends them. Their number
// comes from the pool's size, not the example's 20, because the stages run
// at once and talk through unbuffered channels: a digester that waits for
// a worker while the running ones wait to hand their results to the caller,
// who is still blocked in Go, would deadlock, which the example's unbounded
// goroutines cannot. readFile is os.ReadFile, replaceable to make a read
// fail.
func peerMD5All(ctx context.Context, p *pool.Pool, root string, readFile func(string) ([]byte, error)) (map[string][md5.Size]byte, error) {
	// ctx is canceled when g.Wait() returns. When this version of MD5All returns
	// - even in case of error! - we know that all of the goroutines have finished
	// and the memory they were using can be garbage-collected.
	g, _ := p.Group(ctx)
	paths := make(chan string)

	g.Go(func(ctx context.Context) error {
		defer close(paths)
		return filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if !info.Mode().IsRegular() {
				return nil
			}
			select {
			case paths <- path:
			case <-ctx.Done():
				return ctx.Err()
			}
			return nil
		})
	})

	c := make(chan peerMD5Result)
	for range p.Size() - 1 {
		g.Go(func(ctx context.Context) error {
			for path := range paths {
				data, err := readFile(path)
				if err != nil {
					return err
				}
				select {
				case c <- peerMD5Result{path, md5.Sum(data)}:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
	}
	go func() {
		g.Wait()
		close(c)
	}()

	m := make(map[string][md5.Size]byte)
	for r := range c {
		m[r.path] = r.sum
	}
	// Check whether any of the goroutines failed. Since g is accumulating the
	// errors, we don't need to send them (or check for them) in the individual
	// results sent on the channel.
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return m, nil
}

// From golang.org/x/sync@v0.24.0 errgroup/errgroup_example_md5all_test.go,
// ExampleGroup_pipeline and MD5All: a pipeline of a walker and digesters
// returns the MD5 sum of every regular file of a tree, or the first error
// of any stage, and has no goroutine left when it returns. Adapted: MD5All
// runs on a Group of a pool (see peerMD5All for the digesters' number),
// over a tree made here instead of ".", and with the sums checked rather
// than printed. The error cases the example only describes are checked:
// a failing read is returned as itself (not as the context.Canceled of the
// stages it stopped), and so is a failing walk; goleak checks, at the end,
// that no goroutine outlived them.
func TestPeerErrgroupExampleGroupPipeline(t *testing.T) {
	root := t.TempDir()
	want := make(map[string][md5.Size]byte)
	for d := range 3 {
		dir := filepath.Join(root, fmt.Sprint("dir", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 10 {
			path := filepath.Join(dir, fmt.Sprint("file", f))
			data := []byte(fmt.Sprintf("contents of %d/%d", d, f))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			want[path] = md5.Sum(data)
		}
	}
	p := newPool(t, 5)
	md5All := func(root string, readFile func(string) ([]byte, error)) (m map[string][md5.Size]byte, err error) {
		within(t, 10*time.Second, "MD5All", func() { m, err = peerMD5All(context.Background(), p, root, readFile) })
		return m, err
	}

	m, err := md5All(root, os.ReadFile)
	if err != nil || len(m) != len(want) {
		t.Fatalf("MD5All = %d sums, %v; want %d sums", len(m), err, len(want))
	}
	for path, sum := range want {
		if m[path] != sum {
			t.Errorf("%s:\t%x, want %x", path, m[path], sum)
		}
	}

	errRead := errors.New("read failed")
	bad := filepath.Join(root, "dir1", "file4")
	m, err = md5All(root, func(path string) ([]byte, error) {
		if path == bad {
			return nil, errRead
		}
		return os.ReadFile(path)
	})
	if err != errRead || m != nil {
		t.Fatalf("MD5All with a failing read = %d sums, %v; want nil, %v", len(m), err, errRead)
	}

	m, err = md5All(filepath.Join(root, "missing"), os.ReadFile)
	if !errors.Is(err, fs.ErrNotExist) || m != nil {
		t.Fatalf("MD5All of a missing root = %d sums, %v; want nil, not exist", len(m), err)
	}
}

// From golang.org/x/sync@v0.24.0 errgroup/errgroup.go, Group.Go's comment
// (v0.24.0 has no test of it): errgroup does not recover a task's panic, so
// it crashes the program, and a task that calls runtime.Goexit counts as
// one that returned nil. Ration documents the opposite on purpose, and that
// is asserted: the panic comes back from the Group's Wait as a *PanicError
// (with the value, and also as the cause of the group's context), Goexit as
// ErrGoexit, and the pool keeps its workers for the next group.
func TestPeerErrgroupGoPanicGoexit(t *testing.T) {
	p := newPool(t, 2)
	g, ctx := p.Group(context.Background())
	g.Go(func(context.Context) error { panic("doomed") })
	err := g.Wait()
	var pe *pool.PanicError
	if !errors.As(err, &pe) || pe.Value != "doomed" || context.Cause(ctx) != err {
		t.Fatalf("Wait after a panic = %v (cause %v), want a *PanicError of \"doomed\" as both", err, context.Cause(ctx))
	}

	g, _ = p.Group(context.Background())
	g.Go(func(context.Context) error { runtime.Goexit(); return nil })
	if err := g.Wait(); !errors.Is(err, pool.ErrGoexit) {
		t.Fatalf("Wait after a Goexit = %v, want ErrGoexit", err)
	}

	// Both workers are there: two tasks that wait for each other finish.
	g, _ = p.Group(context.Background())
	var both sync.WaitGroup
	both.Add(2)
	for range 2 {
		g.Go(func(context.Context) error { both.Done(); both.Wait(); return nil })
	}
	peerWait(t, g)
}
