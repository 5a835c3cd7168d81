package cgroup

import (
	"runtime"
	"testing"
)

// TestNoCgroups checks the live reading of an OS without cgroups, which
// on Linux is only reachable through this function.
func TestNoCgroups(t *testing.T) {
	s := noCgroups("darwin", 8)
	if s.NoCgroups != "no cgroups on darwin" || s.Version != 0 || s.HostMode != "unavailable" {
		t.Errorf("NoCgroups %q, Version %d, HostMode %q", s.NoCgroups, s.Version, s.HostMode)
	}
	if s.HostCPUs != 8 || s.AffinityCPUs != 8 || s.HostCPUsSource != "runtime.NumCPU()" || s.AffinitySource != "runtime.NumCPU()" {
		t.Errorf("CPUs: host %d (%s), affinity %d (%s); want 8 from runtime.NumCPU()", s.HostCPUs, s.HostCPUsSource, s.AffinityCPUs, s.AffinitySource)
	}
	if s.Warnings == nil || len(s.Warnings) != 0 || s.CPUQuota != 0 || s.MemoryLimit != 0 || s.CPUSet != nil {
		t.Errorf("limits or warnings on an OS without cgroups: %+v", s)
	}
}

// TestLiveOS checks that a live Read takes the right path for this OS.
func TestLiveOS(t *testing.T) {
	s, err := Reader{}.Read()
	if runtime.GOOS != "linux" {
		if err != nil || s.NoCgroups != "no cgroups on "+runtime.GOOS || s.HostCPUs != runtime.NumCPU() {
			t.Errorf("Read on %s: %v, NoCgroups %q, HostCPUs %d", runtime.GOOS, err, s.NoCgroups, s.HostCPUs)
		}
		if p, err := (Reader{}).ReadProcess(1); err != nil || p.NoCgroups == "" {
			t.Errorf("ReadProcess on %s: %v, NoCgroups %q", runtime.GOOS, err, p.NoCgroups)
		}
		return
	}
	if s.NoCgroups != "" {
		t.Errorf("NoCgroups = %q on linux", s.NoCgroups)
	}
	if mustRead(t, Reader{Root: "testdata/v2"}).NoCgroups != "" {
		t.Error("a snapshot tree claims no cgroups")
	}
}

func mustRead(t *testing.T, r Reader) Snapshot {
	t.Helper()
	s, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestModeFromMounts(t *testing.T) {
	for _, tt := range []struct {
		v1, v2 bool
		want   string
	}{
		{true, true, "hybrid"},
		{false, true, "unified"},
		{true, false, "legacy"},
		{false, false, "unavailable"},
	} {
		if got := modeFromMounts(tt.v1, tt.v2); got != tt.want {
			t.Errorf("modeFromMounts(v1 %v, v2 %v) = %q, want %q", tt.v1, tt.v2, got, tt.want)
		}
	}
}

func TestSnapshotVersion(t *testing.T) {
	for _, tt := range []struct {
		name     string
		cpu, mem int
		v1, v2   bool
		want     int
	}{
		{"cpu decides", 1, 2, true, true, 1},
		{"memory without cpu", 0, 2, true, true, 2},
		{"v2 mounted, no controller", 0, 0, true, true, 2},
		{"v1 mounted, no controller", 0, 0, true, false, 1},
		{"nothing", 0, 0, false, false, 0},
	} {
		got := snapshotVersion(Snapshot{CPUVersion: tt.cpu, MemoryVersion: tt.mem}, tt.v1, tt.v2)
		if got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}
