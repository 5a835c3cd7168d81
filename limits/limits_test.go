package limits

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ration-run/ration/cgroup"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	MiB = 1 << 20
	GiB = 1 << 30
)

// host returns a snapshot of a machine with n CPUs and no limits.
func host(n int) cgroup.Snapshot {
	return cgroup.Snapshot{
		Version: 1, CPUVersion: 1, MemoryVersion: 1, CPUCgroup: "/", MemoryCgroup: "/",
		AffinityCPUs: n, HostCPUs: n, HostMemory: 4 * GiB, Warnings: []string{},
	}
}

// quota sets a v1 CPU quota of q CPUs (period 100000) at /ration-test.
func quota(s cgroup.Snapshot, q float64) cgroup.Snapshot {
	s.CPUQuota, s.LeafCPUQuota = q, q
	s.CPUQuotaUs, s.CPUPeriodUs = int64(q*100000), 100000
	s.CPUQuotaCgroup, s.CPUQuotaFile = "/ration-test", "/sys/fs/cgroup/cpu/ration-test/cpu.cfs_quota_us"
	return s
}

func memLimit(s cgroup.Snapshot, n int64) cgroup.Snapshot {
	s.MemoryLimit, s.MemoryLimitCgroup = n, "/mem-test"
	return s
}

func TestDecideFrom(t *testing.T) {
	cpuset := host(8)
	cpuset.CPUSet = []int{0, 1, 4}
	affinity := host(4)
	affinity.AffinityCPUs = 1
	broken := host(2)
	broken.Warnings = []string{"/sys/fs/cgroup/cpu/cpu.cfs_quota_us: malformed"}

	tests := []struct {
		name      string
		snap      cgroup.Snapshot
		jobs      string
		memPerJob int64
		wantJobs  int
		wantBy    string
		wantEff   float64
		reason    []string // substrings of Reason
		warnings  []string // substrings, one per warning
	}{
		{"no quota on 2 CPUs", host(2), "", 0, 4, "host", 2,
			[]string{"jobs=4: 2 host CPUs, no CPU quota in cgroup v1 /; 2 x 2.00 = 4.00"}, nil},
		{"quota 0.5", quota(host(2), 0.5), "", 0, 1, "cpu_quota", 0.5,
			[]string{"jobs=1: cgroup v1 CPU quota 0.50 CPUs (50000/100000 us) at /ration-test < 2 host CPUs; 2 x 0.50 = 1.00"}, nil},
		{"quota 1", quota(host(2), 1), "", 0, 2, "cpu_quota", 1, []string{"2 x 1.00 = 2.00"}, nil},
		{"quota 1.5", quota(host(2), 1.5), "", 0, 3, "cpu_quota", 1.5, []string{"2 x 1.50 = 3.00"}, nil},
		{"quota above host", quota(host(2), 3), "", 0, 4, "host", 2,
			[]string{"jobs=4: 2 host CPUs < cgroup v1 CPU quota 3.00 CPUs"}, nil},
		{"quota equal to host names the quota", quota(host(2), 2), "", 0, 4, "cpu_quota", 2,
			[]string{"CPU quota 2.00 CPUs (200000/100000 us) at /ration-test = 2 host CPUs"}, nil},
		// The story behind ration: 4 CPUs of quota on a 24-core node.
		{"quota 4 on 24 cores", quota(host(24), 4), "", 0, 8, "cpu_quota", 4, []string{"< 24 host CPUs; 2 x 4.00 = 8.00"}, nil},
		{"no quota on 24 cores is capped", host(24), "", 0, 8, "max", 24, []string{"2 x 24.00 = 48.00, capped at 8"}, nil},
		{"tiny quota raised to 1", quota(host(2), 0.3), "", 0, 1, "min", 0.3, []string{"2 x 0.30 = 0.60, raised to 1"}, nil},
		{"cpuset", cpuset, "", 0, 6, "cpuset", 3, []string{"jobs=6: cpuset 0-1,4 (3 CPUs) < 8 host CPUs"}, nil},
		{"affinity", affinity, "", 0, 2, "affinity", 1, []string{"jobs=2: 1 affinity CPUs < 4 host CPUs"}, nil},
		{"explicit -j wins", quota(host(2), 0.5), "6", 0, 6, "explicit", 0.5,
			[]string{"jobs=6: -j 6 given (the default would be 1: cgroup v1 CPU quota 0.50"}, nil},
		{"percent", host(2), "50%", 0, 1, "host", 2, []string{"jobs=1: 2 host CPUs", "-j 50% x 2.00 effective CPUs = 1.00"}, nil},
		{"percent is not capped at 8", host(24), "100%", 0, 24, "host", 24, []string{"= 24.00"}, nil},
		{"percent raised to 1", quota(host(2), 0.5), "10%", 0, 1, "min", 0.5, []string{"= 0.05, raised to 1"}, nil},
		{"fractional percent", quota(host(8), 1.5), "150%", 0, 2, "cpu_quota", 1.5, []string{"= 2.25"}, nil},
		{"memory caps default", memLimit(host(2), 256*MiB), "", 100 * MiB, 2, "memory", 2,
			[]string{"memory: 0.9 x cgroup v1 memory limit 256 MiB at /mem-test / 100 MiB per job = 2.30, caps jobs at 2"}, nil},
		{"memory does not cap", memLimit(host(2), 4*GiB), "", 100 * MiB, 4, "host", 2, []string{"= 36.86, no cap"}, nil},
		{"memory: not even one fits", memLimit(host(2), 256*MiB), "", 300 * MiB, 1, "memory", 2,
			[]string{"caps jobs at 1"}, []string{"even one job of 300 MiB does not fit in 0.9 x cgroup v1 memory limit 256 MiB"}},
		{"memory: explicit -j wins with a warning", memLimit(host(2), 256*MiB), "4", 100 * MiB, 4, "explicit", 2,
			[]string{"-j 4 given (the default would be 2"}, []string{"-j 4 exceeds what memory fits: 0.9 x cgroup v1 memory limit 256 MiB at /mem-test / 100 MiB per job = 2.30, so only 2 jobs"}},
		{"memory caps percent", memLimit(host(2), 256*MiB), "300%", 100 * MiB, 2, "memory", 2, []string{"= 6.00; memory:", "caps jobs at 2"}, nil},
		{"host memory when the cgroup has none", host(8), "", GiB, 3, "memory", 8,
			[]string{"0.9 x host memory 4 GiB (no cgroup memory limit) / 1 GiB per job = 3.60, caps jobs at 3"}, nil},
		{"warnings pass through, host fallback", broken, "", 0, 4, "host", 2, []string{"2 host CPUs"}, []string{"malformed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DecideFrom(tt.snap, tt.jobs, tt.memPerJob)
			if err != nil {
				t.Fatal(err)
			}
			if d.Jobs != tt.wantJobs || d.DecidedBy != tt.wantBy || d.EffectiveCPUs != tt.wantEff {
				t.Errorf("jobs=%d decided_by=%s effective=%v, want %d %s %v\nreason: %s",
					d.Jobs, d.DecidedBy, d.EffectiveCPUs, tt.wantJobs, tt.wantBy, tt.wantEff, d.Reason)
			}
			for _, r := range tt.reason {
				if !strings.Contains(d.Reason, r) {
					t.Errorf("reason %q\n  does not contain %q", d.Reason, r)
				}
			}
			if d.Warnings == nil || len(d.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings %q, want %d", d.Warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.Contains(d.Warnings[i], w) {
					t.Errorf("warning %q does not contain %q", d.Warnings[i], w)
				}
			}
		})
	}
}

func TestDecideJobsSources(t *testing.T) {
	root := filepath.Join("..", "cgroup", "testdata", "v1") // quota 0.5 on 2 CPUs: default 1
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "RATION_JOBS" {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name, jobs, env string
		want            int
		source          string
		wantErr         string
	}{
		{"default", "", "", 1, "default", ""},
		{"env", "", "3", 3, "RATION_JOBS", ""},
		{"env percent", "", "200%", 1, "RATION_JOBS", ""},
		{"flag beats env", "5", "3", 5, "-j", ""},
		{"flag beats bad env", "5", "zz", 5, "-j", ""},
		{"bad env", "", "zz", 0, "", `RATION_JOBS: "zz" is not a whole number >= 1, +N, -N or a percentage like 50%`},
		{"bad env percent", "", "0%", 0, "", `RATION_JOBS: "0%" is not a percentage above 0 like 50%`},
		{"zero", "0", "", 0, "", `jobs: "0" is not a whole number >= 1, +N, -N or a percentage like 50%`},
		{"minus", "-2", "", 1, "-j", ""},             // 2 CPUs - 2, raised to 1 (see TestRelativeJobs)
		{"env plus", "", "+1", 1, "RATION_JOBS", ""}, // floor(0.5) + 1
		{"word", "many", "", 0, "", `jobs: "many" is not a whole number >= 1`},
		{"fraction", "1.5", "", 0, "", `jobs: "1.5" is not a whole number >= 1`},
		{"blank", " ", "", 0, "", `jobs: " " is not a whole number >= 1`},
		{"bare percent", "%", "", 0, "", `jobs: "%" is not a percentage above 0 like 50%`},
		{"zero percent", "0%", "", 0, "", `jobs: "0%" is not a percentage above 0`},
		{"negative percent", "-50%", "", 0, "", `jobs: "-50%" is not a percentage above 0`},
		{"exponent percent", "1e2%", "", 0, "", `jobs: "1e2%" is not a percentage above 0`},
		{"plus", "+3", "", 3, "-j", ""},
		{"plus fraction", "+1.5", "", 0, "", `jobs: "+1.5" is not a whole number >= 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decide(Options{FSRoot: root, Jobs: tt.jobs, Getenv: env(tt.env)})
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Jobs != tt.want || d.JobsSource != tt.source {
				t.Errorf("jobs=%d source=%s, want %d %s (%s)", d.Jobs, d.JobsSource, tt.want, tt.source, d.Reason)
			}
		})
	}
	if _, err := Decide(Options{FSRoot: root, MemPerJob: -1}); err == nil || err.Error() != "negative memory per job -1" {
		t.Errorf("negative MemPerJob: err = %v, want %q", err, "negative memory per job -1")
	}
	if _, err := DecideFrom(host(2), "x", 0); err == nil || !strings.HasPrefix(err.Error(), `jobs: "x" is not`) {
		t.Errorf("DecideFrom(jobs x): err = %v, want one naming jobs", err)
	}
}

// TestDecideFixtures runs the whole path, files to sentence.
func TestDecideFixtures(t *testing.T) {
	tests := []struct {
		fixture   string
		memPerJob int64
		jobs      int
		reason    string
	}{
		{"v1", 0, 1, "jobs=1: cgroup v1 CPU quota 0.50 CPUs (50000/100000 us) at /ration-test < 2 host CPUs (affinity 2, cpuset 0-1); 2 x 0.50 = 1.00"},
		{"v1", 100 * MiB, 1, "memory: 0.9 x cgroup v1 memory limit 256 MiB at /ration-test / 100 MiB per job = 2.30, no cap"},
		{"v2", 0, 3, "jobs=3: cgroup v2 CPU quota 1.50 CPUs (150000/100000 us) at /system.slice/app.service < 8 host CPUs (affinity 8, cpuset 0-7); 2 x 1.50 = 3.00"},
		{"v2-nested", 0, 2, "jobs=2: cgroup v2 CPU quota 1.00 CPUs (100000/100000 us) at /kubepods/pod1 < 16 host CPUs (affinity 16)"},
		{"hybrid", 0, 6, "jobs=6: cgroup v1 CPU quota 3.00 CPUs (300000/100000 us) at /job < 4 host CPUs (affinity 4); 2 x 3.00 = 6.00"},
		{"v1-docker", 0, 3, "jobs=3: cgroup v1 CPU quota 1.50 CPUs (75000/50000 us) at /docker/abc/job < 8 host CPUs (affinity 8)"},
		{"v2-cpuset", 0, 6, "jobs=6: cpuset 0-1,4 (3 CPUs) < 8 host CPUs (affinity 8), no CPU quota in cgroup v2 /pinned; 2 x 3.00 = 6.00"},
		{"none", 0, 8, "jobs=8: 4 host CPUs (affinity 4), no CPU cgroup; 2 x 4.00 = 8.00"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			d, err := Decide(Options{FSRoot: filepath.Join("..", "cgroup", "testdata", tt.fixture), MemPerJob: tt.memPerJob, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			if d.Jobs != tt.jobs || !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("jobs=%d reason %q\nwant jobs=%d reason containing %q", d.Jobs, d.Reason, tt.jobs, tt.reason)
			}
		})
	}
}

func TestDecisionJSON(t *testing.T) {
	d, err := DecideFrom(host(2), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cgroup_version", "cpu_quota", "cpuset_cpus", "affinity_cpus", "host_cpus",
		"effective_cpus", "memory_limit_bytes", "jobs", "reason", "warnings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	for _, k := range []string{"cpu_quota", "memory_limit_bytes", "cpuset_cpus"} {
		if m[k] != nil {
			t.Errorf("%s = %v, want null when unlimited/unknown", k, m[k])
		}
	}
	if w, ok := m["warnings"].([]any); !ok || len(w) != 0 {
		t.Errorf("warnings = %#v, want []", m["warnings"])
	}

	none, _ := DecideFrom(cgroup.Snapshot{HostCPUs: 1, AffinityCPUs: 1}, "", 0)
	b, _ = json.Marshal(none)
	if !strings.Contains(string(b), `"cgroup_version":null`) || !strings.Contains(string(b), `"warnings":[]`) {
		t.Errorf("no-cgroup JSON: %s", b)
	}
	q, _ := DecideFrom(memLimit(quota(host(2), 1.5), 256*MiB), "", 0)
	b, _ = json.Marshal(q)
	for _, s := range []string{`"cgroup_version":1`, `"cpu_quota":1.5`, `"memory_limit_bytes":268435456`, `"jobs":3`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("JSON lacks %s: %s", s, b)
		}
	}
}

func TestPlanGOMAXPROCS(t *testing.T) {
	tests := []struct {
		name       string
		leaf, walk float64
		cpus, cur  int
		wantAct    gomaxprocsAction
		wantN      int
	}{
		{"no limits", 0, 0, 8, 8, keep, 8},
		{"leaf limit only: runtime handles it", 2, 2, 8, 2, keep, 2},
		{"tighter parent", 0, 3, 16, 16, lower, 3},
		{"tighter parent than leaf", 8, 2.5, 16, 8, lower, 3},
		{"already lowered", 0, 3, 16, 3, keep, 3},
		{"parent limit below 2 rounds to 2 like the runtime", 0, 0.5, 2, 2, keep, 2},
		{"parent limit below 2 on a big host", 0, 0.5, 16, 16, lower, 2},
		{"parent limit gone: hand back", 0, 0, 16, 3, restore, 16},
		{"never raises", 0, 3, 16, 1, keep, 1},
		{"unknown cpus", 0, 3, 0, 4, keep, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			act, n := planGOMAXPROCS(tt.leaf, tt.walk, tt.cpus, tt.cur)
			if act != tt.wantAct || n != tt.wantN {
				t.Errorf("plan = %v, %d; want %v, %d", act, n, tt.wantAct, tt.wantN)
			}
		})
	}
}

func TestAdjustGOMAXPROCS(t *testing.T) {
	noEnv := func(string) string { return "" }
	if changed, msg := adjustGOMAXPROCS(Decision{FSRoot: "/snap"}, noEnv); changed || !strings.Contains(msg, "/snap") {
		t.Errorf("fs root: %v %q", changed, msg)
	}
	env := func(k string) string {
		if k == "GOMAXPROCS" {
			return "3"
		}
		return ""
	}
	if changed, msg := adjustGOMAXPROCS(Decision{}, env); changed || !strings.Contains(msg, "environment") {
		t.Errorf("GOMAXPROCS env: %v %q", changed, msg)
	}

	// The restore path on the real runtime: pretend an earlier correction
	// lowered GOMAXPROCS to 1 and the parent limit has since gone.
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs to tell 1 from the runtime default")
	}
	t.Cleanup(runtime.SetDefaultGOMAXPROCS)
	runtime.GOMAXPROCS(1)
	s, err := cgroup.Reader{}.Read()
	if err != nil {
		t.Skipf("no cgroup: %v", err)
	}
	if s.CPUQuota > 0 && s.CPUQuota < float64(s.AffinityCPUs) && s.CPUQuota <= 1 {
		t.Skip("this process has a CPU quota of at most 1 CPU")
	}
	d, _ := DecideFrom(s, "", 0)
	s.CPUQuota = s.LeafCPUQuota // no tighter parent
	d.Snapshot = s
	changed, msg := adjustGOMAXPROCS(d, noEnv)
	if !changed || runtime.GOMAXPROCS(0) < 2 {
		t.Errorf("changed=%v GOMAXPROCS=%d msg=%q: want the runtime default (>= 2) back", changed, runtime.GOMAXPROCS(0), msg)
	}
	// A second call finds nothing to do.
	if changed, msg := adjustGOMAXPROCS(d, noEnv); changed {
		t.Errorf("second call changed GOMAXPROCS: %q", msg)
	}
}

// TestDecideLive checks the decision for this process against numbers
// obtained another way: the runtime's CPU count (sched_getaffinity at
// start) and the policy formula.
func TestDecideLive(t *testing.T) {
	d, err := Decide(Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Warnings) != 0 {
		t.Errorf("warnings on the live system: %q", d.Warnings)
	}
	if d.AffinityCPUs != runtime.NumCPU() {
		t.Errorf("affinity_cpus %d, runtime.NumCPU() %d", d.AffinityCPUs, runtime.NumCPU())
	}
	eff := float64(d.AffinityCPUs)
	if d.CPUSetCPUs != nil {
		eff = min(eff, float64(*d.CPUSetCPUs))
	}
	if d.CPUQuota != nil {
		eff = min(eff, *d.CPUQuota)
	}
	want := max(1, min(int(2*eff), DefaultMaxJobs))
	if d.EffectiveCPUs != eff || d.Jobs != want || !strings.HasPrefix(d.Reason, "jobs="+strconv.Itoa(want)+": ") {
		t.Errorf("effective %v jobs %d reason %q; want %v, %d", d.EffectiveCPUs, d.Jobs, d.Reason, eff, want)
	}
	t.Log(d.Reason)
}

// TestAdjustGOMAXPROCSCgroupNamespace: in a cgroup namespace whose
// hierarchy was mounted outside it (the fixture: "0::/" under a mount
// whose root is "/../.."), the Go runtime finds no cgroup at all
// (internal/runtime/cgroup matches mount roots as path prefixes) and keeps
// GOMAXPROCS at the CPU count, while package cgroup finds the 1.5-CPU quota
// there. AdjustGOMAXPROCS must lower GOMAXPROCS to the runtime's own
// rounding of it, 2; it left 8 alone, taking the leaf's quota for one the
// runtime sees.
func TestAdjustGOMAXPROCSCgroupNamespace(t *testing.T) {
	s, err := cgroup.Reader{Root: filepath.Join("..", "cgroup", "testdata", "v2-namespace-host-mount")}.Read()
	if err != nil {
		t.Fatal(err)
	}
	if s.LeafCPUQuota != 1.5 || s.AffinityCPUs != 8 {
		t.Fatalf("fixture: leaf quota %v, affinity %d; want 1.5 and 8", s.LeafCPUQuota, s.AffinityCPUs)
	}
	d, err := DecideFrom(s, "", 0) // as of this process: no FSRoot
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runtime.SetDefaultGOMAXPROCS)
	runtime.GOMAXPROCS(8) // what the runtime keeps on the fixture's 8 CPUs
	changed, msg := adjustGOMAXPROCS(d, func(string) string { return "" })
	if n := runtime.GOMAXPROCS(0); !changed || n != 2 || !strings.Contains(msg, "cgroup namespace") {
		t.Errorf("changed=%v GOMAXPROCS=%d msg=%q: want it lowered to 2, saying the cgroup namespace hides the quota", changed, n, msg)
	}
}

// TestJobs checks the one call an embedder makes: it is Decide on the live
// system with RATION_JOBS honoured, and an invalid RATION_JOBS is an error,
// never a silent default.
func TestJobs(t *testing.T) {
	ctx := context.Background()
	t.Run("default", func(t *testing.T) {
		t.Setenv("RATION_JOBS", "")
		n, why, err := Jobs(ctx)
		d, derr := Decide(Options{})
		if err != nil || derr != nil {
			t.Fatalf("Jobs = %v, Decide = %v", err, derr)
		}
		if n != d.Jobs || why != d.Reason || n < 1 {
			t.Fatalf("Jobs = %d, %q; want Decide's %d, %q", n, why, d.Jobs, d.Reason)
		}
	})
	t.Run("RATION_JOBS", func(t *testing.T) {
		t.Setenv("RATION_JOBS", "3")
		n, why, err := Jobs(ctx)
		if err != nil || n != 3 || !strings.Contains(why, "RATION_JOBS=3") {
			t.Fatalf("Jobs = %d, %q, %v; want 3 with the variable named in the reason", n, why, err)
		}
	})
	t.Run("invalid RATION_JOBS", func(t *testing.T) {
		t.Setenv("RATION_JOBS", "abc")
		n, why, err := Jobs(ctx)
		want := `RATION_JOBS: "abc" is not a whole number >= 1, +N, -N or a percentage like 50%`
		if err == nil || err.Error() != want || n != 0 || why != "" {
			t.Fatalf("Jobs = %d, %q, %v; want 0 and %q", n, why, err, want)
		}
	})
	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		if n, _, err := Jobs(ctx); !errors.Is(err, context.Canceled) || n != 0 {
			t.Fatalf("Jobs = %d, %v; want 0, context.Canceled", n, err)
		}
	})
}
