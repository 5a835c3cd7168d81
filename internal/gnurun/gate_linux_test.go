package gnurun

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
)

func TestParseTaskStat(t *testing.T) {
	for _, c := range []struct {
		line  string
		state byte
		flags uint64
		ok    bool
	}{
		// A user thread, running, and a kernel thread, asleep
		// (real lines of /proc/PID/task/TID/stat).
		{"29319 (cat) R 29210 29319 20642 0 -1 4194304 75 0 0 0 0 0 0 0 27 7 1 0 838467 3133440 383", 'R', 4194304, true},
		{"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 2 0 0 20 0 1 0 3 0 0", 'S', 2129984, true},
		// A command name with spaces and a parenthesis.
		{"77 (a) b (c) D 1 77 77 0 -1 4194560 1 0 0 0", 'D', 4194560, true},
		{"garbage", 0, 0, false},
		{"1 (x) R 1 2", 0, 0, false},
	} {
		state, flags, ok := parseTaskStat([]byte(c.line))
		if state != c.state || flags != c.flags || ok != c.ok {
			t.Errorf("parseTaskStat(%q) = %c, %d, %v; want %c, %d, %v", c.line, state, flags, ok, c.state, c.flags, c.ok)
		}
	}
	if 2129984&pfKthread == 0 || 4194304&pfKthread != 0 {
		t.Error("PF_KTHREAD does not tell kthreadd from cat")
	}
}

func TestParseVMStatMeminfo(t *testing.T) {
	vm := "nr_free_pages 1979180\npswpin 12\npswpout 340\npgfault 1\n"
	if in, out, ok := parseVMStat([]byte(vm)); in != 12 || out != 340 || !ok {
		t.Errorf("parseVMStat = %d, %d, %v", in, out, ok)
	}
	if _, _, ok := parseVMStat([]byte("pswpin 1\n")); ok {
		t.Error("parseVMStat without pswpout is ok")
	}
	mi := "MemTotal:       24567892 kB\nMemFree:         7916720 kB\nMemAvailable:   20104400 kB\nBuffers:          337928 kB\n"
	if n, ok := parseMemAvailable([]byte(mi)); n != 20104400*1024 || !ok {
		t.Errorf("parseMemAvailable = %d, %v", n, ok)
	}
	if _, ok := parseMemAvailable([]byte("MemFree: 1 kB\n")); ok {
		t.Error("parseMemAvailable without MemAvailable is ok")
	}
}

// TestReadMachine reads this machine's /proc: there is at least this
// test's own running thread (less one, as GNU's count less its ps, so
// >= 0), the swap counters and MemAvailable.
func TestReadMachine(t *testing.T) {
	m, err := readMachine("/proc", true)
	if err != nil || !m.haveLoad || !m.haveVM || !m.haveMem || m.memAvailable <= 0 || m.load < 0 {
		t.Errorf("readMachine(/proc) = %+v, %v", m, err)
	}
}

// TestGateDecide: the gate's rules over given readings of the machine.
func TestGateDecide(t *testing.T) {
	now := time.Now()
	m := machine{load: 3, haveLoad: true, swapIn: 10, swapOut: 10, haveVM: true, memAvailable: 1 << 30, haveMem: true}
	read := func(string, bool) (machine, error) { return m, nil }
	for _, c := range []struct {
		g    StartGate
		open bool
	}{
		{StartGate{MaxLoad: 4}, true},
		{StartGate{MaxLoad: 3}, false}, // load >= max is too high, as GNU's
		{StartGate{MemFree: 1<<30 - 1}, true},
		{StartGate{MemFree: 1 << 30}, false},
		{StartGate{NoSwap: true}, false}, // the first second is unknown
	} {
		s := &gateState{readMachine: read}
		if got := s.decide(&c.g, now); got != c.open {
			t.Errorf("%+v: open %v, want %v", c.g, got, c.open)
		}
	}
	// --noswap: swapping needs pages both in and out over a second.
	g := StartGate{NoSwap: true}
	s := &gateState{readMachine: read}
	s.decide(&g, now)
	m.swapIn = 11 // in only
	if !s.decide(&g, now.Add(time.Second)) {
		t.Error("swap-in alone counts as swapping")
	}
	m.swapIn, m.swapOut = 12, 11
	if s.decide(&g, now.Add(1500*time.Millisecond)) != true {
		t.Error("the verdict changed within the second")
	}
	if s.decide(&g, now.Add(2*time.Second)) {
		t.Error("pages in and out within a second do not count as swapping")
	}
}

// TestGateNeverOpen: a gate that never opens (more free memory than any
// machine has) runs the jobs one at a time, each when no other runs, and
// the run ends; an open one (a load no machine has) lets them run
// together.
func TestGateNeverOpen(t *testing.T) {
	if most := gatedRun(t, StartGate{MemFree: 1 << 62}); most != 1 {
		t.Errorf("%d jobs ran at once behind a closed gate; want 1", most)
	}
	if most := gatedRun(t, StartGate{MaxLoad: 1e9, MemFree: 1}); most < 2 {
		t.Errorf("%d jobs ran at once behind an open gate; want them together", most)
	}
}

// gatedRun runs 4 jobs of 0.3 s, 4 at a time, behind g, and returns how
// many ran at once at most.
func gatedRun(t *testing.T, g StartGate) int {
	var mu sync.Mutex
	running, most := 0, 0
	obs := event.Func(func(e event.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case event.JobStarted:
			running++
			most = max(most, running)
		case event.JobFinished:
			running--
		}
	})
	var out syncBuf
	r, err := runner.New(with(runner.Config{Command: []string{"sh", "-c", "sleep 0.3"}, Input: input.Args(nums(4)), Jobs: 4, Observer: obs, Stdout: &out}, GNU{Exec: GNUExec{Gate: g}}))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(t.Context())
	if err != nil || sum.Succeeded != 4 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	return most
}

// TestMemFreeStopsYoungest: when free memory falls below half of MemFree
// while three jobs run, the youngest (job 3) is stopped by real signals
// and queued again, not counting as a retry; it runs again once memory is
// back, and every job succeeds. The machine's free memory is given (no
// test can make this machine short of memory safely).
func TestMemFreeStopsYoungest(t *testing.T) {
	var free atomic.Int64
	free.Store(2000)
	var mu sync.Mutex
	started := 0
	var retried []event.Event
	obs := event.Func(func(e event.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case event.JobStarted:
			if started++; started == 3 {
				free.Store(100) // below half of 1000
			}
		case event.JobRetried:
			retried = append(retried, e)
			free.Store(2000)
		}
	})
	var out syncBuf
	g := GNU{Exec: GNUExec{Gate: StartGate{MemFree: 1000}}}
	g.readMachine = func(string, bool) (machine, error) {
		return machine{memAvailable: free.Load(), haveMem: true}, nil
	}
	r, err := runner.New(with(runner.Config{Command: []string{"sh", "-c", "sleep 1.5; echo done $0", "{}"}, Input: input.Args(nums(3)), Jobs: 3,
		Observer: obs, Stdout: &out}, g))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(t.Context())
	if err != nil || sum.Succeeded != 3 || sum.Failed != 0 {
		t.Fatalf("summary %+v, %v; output %q", sum, err, out.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(retried) != 1 || retried[0].Seq != 3 || !errors.Is(retried[0].Err, ErrMemFree) || retried[0].Signal == 0 {
		t.Errorf("retried %+v; want job 3 once, stopped by a signal for --memfree", retried)
	}
}
