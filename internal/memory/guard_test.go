package memory

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestGuardMargin(t *testing.T) {
	for _, tc := range []struct{ limit, want int64 }{
		{64 << 20, 16 << 20},
		{200 << 20, 16 << 20},
		{1 << 30, 64 << 20},
		{16 << 30, 256 << 20},
	} {
		if got := GuardMargin(tc.limit); got != tc.want {
			t.Errorf("GuardMargin(%d) = %d; want %d", tc.limit, got, tc.want)
		}
	}
}

func TestGuardInterval(t *testing.T) {
	const limit = 200 << 20 // margin 16 MiB: the line is at 184 MiB, half of it at 192
	for _, tc := range []struct {
		used int64
		want time.Duration
	}{
		{0, 46875 * time.Microsecond},           // 192 MiB at 4 GiB/s
		{150 << 20, 10253906 * time.Nanosecond}, // 42 MiB at 4 GiB/s
		{172 << 20, 4882812 * time.Nanosecond},  // 20 MiB at 4 GiB/s
		{184 << 20, guardMinInterval},           // 8 MiB: 1.95 ms
		{192 << 20, guardMinInterval},
		{250 << 20, guardMinInterval},
	} {
		if got := guardInterval(limit, tc.used); got != tc.want {
			t.Errorf("guardInterval(200 MiB, %d MiB) = %v; want %v", tc.used>>20, got, tc.want)
		}
	}
	if got := guardInterval(4<<30, 0); got != guardMaxInterval {
		t.Errorf("guardInterval(4 GiB, 0) = %v; want %v", got, guardMaxInterval)
	}
}

func TestPickVictim(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups []jobGroup
		want   int
		wantOK bool
	}{
		{"none", nil, 0, false},
		{"the largest", []jobGroup{{10, 40 << 20}, {11, 300 << 20}, {12, 40 << 20}}, 11, true},
		{"a tie goes to the younger", []jobGroup{{12, 40 << 20}, {10, 40 << 20}}, 12, true},
	} {
		got, ok := pickVictim(tc.groups)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("%s: pickVictim = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestGroupKill(t *testing.T) {
	root := t.TempDir()
	pod := filepath.Join(root, "pod")
	ctr := filepath.Join(pod, "ctr")
	if err := os.MkdirAll(ctr, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(dir, v string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "memory.oom.group"), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := &Sampler{version: 2, leaf: ctr, limitAt: ctr}
	if on, _ := GroupKill(s); on {
		t.Error("no memory.oom.group: a group kill")
	}
	write(ctr, "0")
	write(pod, "1")
	if on, _ := GroupKill(s); on {
		t.Error("memory.oom.group set above the cgroup whose limit counts: a group kill")
	}
	if on, at := GroupKill(&Sampler{version: 2, leaf: ctr, limitAt: pod}); !on || at != pod {
		t.Errorf("set on the limit's cgroup: GroupKill = %v, %q; want true, %q", on, at, pod)
	}
	write(ctr, "1")
	if on, at := GroupKill(s); !on || at != ctr {
		t.Errorf("set on ration's cgroup: GroupKill = %v, %q; want true, %q", on, at, ctr)
	}
	if on, _ := GroupKill(&Sampler{version: 1, leaf: ctr, limitAt: ctr}); on {
		t.Error("cgroup v1: a group kill")
	}
	if on, _ := GroupKill(&Sampler{version: 2, leaf: ctr}); on {
		t.Error("no limit: a group kill")
	}
}
