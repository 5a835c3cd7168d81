package memory

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFree(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"memory.usage_in_bytes": "157286400\n", "memory.limit_in_bytes": "209715200\n",
		"memory.stat": "total_inactive_file 0\ntotal_rss 157286400\ntotal_cache 0\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cg := SamplerFor(dir, 1)
	noLimit := SamplerFor(t.TempDir(), 1)
	for _, tc := range []struct {
		name      string
		avail     int64
		haveAvail bool
		s         *Sampler
		want      int64
		wantOK    bool
	}{
		{"MemAvailable alone", 1 << 30, true, nil, 1 << 30, true},
		{"nothing known", 0, false, nil, 0, false},
		{"the cgroup's headroom is less", 1 << 30, true, cg, 50 << 20, true},
		{"MemAvailable is less", 10 << 20, true, cg, 10 << 20, true},
		{"the cgroup alone", 0, false, cg, 50 << 20, true},
		{"an unreadable cgroup adds nothing", 1 << 30, true, noLimit, 1 << 30, true},
	} {
		got, ok := Free(tc.avail, tc.haveAvail, tc.s)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("%s: Free = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestFreeGate(t *testing.T) {
	g := FreeGate{Min: 1000}
	for _, tt := range []struct {
		free        int64
		known       bool
		start, stop bool
	}{
		{2000, true, true, false},
		{1001, true, true, false},
		{1000, true, false, false}, // exactly Min is not more than Min
		{500, true, false, false},  // half of Min is not below half
		{499, true, false, true},
		{0, true, false, true},
		{5000, false, false, false}, // unknown: no start, and no stop
	} {
		if got := g.Start(tt.free, tt.known); got != tt.start {
			t.Errorf("Start(%d, %v) = %v, want %v", tt.free, tt.known, got, tt.start)
		}
		if got := g.StopYoungest(tt.free, tt.known); got != tt.stop {
			t.Errorf("StopYoungest(%d, %v) = %v, want %v", tt.free, tt.known, got, tt.stop)
		}
	}
	off := FreeGate{}
	if !off.Start(0, false) || off.StopYoungest(0, true) {
		t.Error("FreeGate{} checks something")
	}
}
