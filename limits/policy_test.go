package limits

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ration-run/ration/cgroup"
)

// The tests below cover each pure step of decide on its own; TestDecideFrom
// covers their composition.

func TestEffectiveCPUs(t *testing.T) {
	cpuset := func(s cgroup.Snapshot, cpus ...int) cgroup.Snapshot { s.CPUSet = cpus; return s }
	affinity := func(s cgroup.Snapshot, n int, source string) cgroup.Snapshot {
		s.AffinityCPUs, s.AffinitySource = n, source
		return s
	}
	noCPU := host(4)
	noCPU.CPUVersion = 0
	darwin := cgroup.Snapshot{HostCPUs: 8, AffinityCPUs: 8, NoCgroups: "no cgroups on darwin"}
	tests := []struct {
		name  string
		snap  cgroup.Snapshot
		value float64
		by    string
		chain string
	}{
		{"host only", host(2), 2, "host", "2 host CPUs, no CPU quota in cgroup v1 /"},
		{"quota below host", quota(host(2), 0.5), 0.5, "cpu_quota",
			"cgroup v1 CPU quota 0.50 CPUs (50000/100000 us) at /ration-test < 2 host CPUs"},
		{"quota above host", quota(host(2), 3), 2, "host",
			"2 host CPUs < cgroup v1 CPU quota 3.00 CPUs (300000/100000 us) at /ration-test"},
		{"tie names the quota", quota(host(2), 2), 2, "cpu_quota",
			"cgroup v1 CPU quota 2.00 CPUs (200000/100000 us) at /ration-test = 2 host CPUs"},
		{"cpuset", cpuset(host(8), 0, 1, 4), 3, "cpuset", "cpuset 0-1,4 (3 CPUs) < 8 host CPUs, no CPU quota in cgroup v1 /"},
		{"cpuset equal to host is named with it", cpuset(host(2), 0, 1), 2, "host", "2 host CPUs (cpuset 0-1), no CPU quota in cgroup v1 /"},
		{"affinity", affinity(host(4), 1, "sched_getaffinity"), 1, "affinity", "1 affinity CPUs < 4 host CPUs, no CPU quota in cgroup v1 /"},
		{"affinity equal to host from another source", affinity(host(4), 4, "status"), 4, "host",
			"4 host CPUs (affinity 4), no CPU quota in cgroup v1 /"},
		{"all three", affinity(cpuset(quota(host(8), 1.5), 0, 1), 4, "x"), 1.5, "cpu_quota",
			"cgroup v1 CPU quota 1.50 CPUs (150000/100000 us) at /ration-test < cpuset 0-1 (2 CPUs) < 4 affinity CPUs < 8 host CPUs"},
		{"no CPU cgroup", noCPU, 4, "host", "4 host CPUs, no CPU cgroup"},
		{"no cgroups on this OS", darwin, 8, "host", "8 host CPUs, no cgroups on darwin"},
		{"unknown host counts as 1", cgroup.Snapshot{}, 1, "host", "1 host CPUs, no CPU cgroup"},
	}
	for _, tt := range tests {
		b := effectiveCPUs(tt.snap)
		if b.value() != tt.value || b.by() != tt.by || b.chain != tt.chain {
			t.Errorf("%s: %v by %s, %q\nwant %v by %s, %q", tt.name, b.value(), b.by(), b.chain, tt.value, tt.by, tt.chain)
		}
	}
}

// budget is a cpuBudget of one input.
func budget(key string, v float64) cpuBudget {
	return cpuBudget{inputs: []input{{key: key, value: v}}, chain: "C"}
}

func TestCPUPolicy(t *testing.T) {
	tests := []struct {
		eff  float64
		key  string
		want choice
	}{
		{2, "host", choice{n: 4, by: "host", why: "2 x 2.00 = 4.00"}},
		{1.5, "cpu_quota", choice{n: 3, by: "cpu_quota", why: "2 x 1.50 = 3.00"}},
		{0.3, "cpu_quota", choice{n: 1, by: "min", why: "2 x 0.30 = 0.60, raised to 1"}},
		{0.5, "cpu_quota", choice{n: 1, by: "cpu_quota", why: "2 x 0.50 = 1.00"}},
		{4, "cpu_quota", choice{n: 8, by: "cpu_quota", why: "2 x 4.00 = 8.00"}},
		{4.5, "cpuset", choice{n: 8, by: "max", why: "2 x 4.50 = 9.00, capped at 8"}},
		{24, "host", choice{n: 8, by: "max", why: "2 x 24.00 = 48.00, capped at 8"}},
		{1.45, "cpu_quota", choice{n: 2, by: "cpu_quota", why: "2 x 1.45 = 2.90"}},
	}
	for _, tt := range tests {
		if got := cpuPolicy(budget(tt.key, tt.eff)); got != tt.want {
			t.Errorf("cpuPolicy(%v %s) = %+v, want %+v", tt.eff, tt.key, got, tt.want)
		}
	}
}

func TestPercentPolicy(t *testing.T) {
	tests := []struct {
		eff  float64
		req  request
		want choice
	}{
		{2, request{percent: 50, text: "50%", source: "-j"}, choice{n: 1, by: "host", why: "-j 50% x 2.00 effective CPUs = 1.00"}},
		{24, request{percent: 100, text: "100%", source: "-j"}, choice{n: 24, by: "host", why: "-j 100% x 24.00 effective CPUs = 24.00"}},
		{0.5, request{percent: 10, text: "10%", source: "RATION_JOBS"}, choice{n: 1, by: "min", why: "RATION_JOBS=10% x 0.50 effective CPUs = 0.05, raised to 1"}},
		{1.5, request{percent: 150, text: "150%", source: "-j"}, choice{n: 2, by: "host", why: "-j 150% x 1.50 effective CPUs = 2.25"}},
		{10, request{percent: 30, text: "30%", source: "-j"}, choice{n: 3, by: "host", why: "-j 30% x 10.00 effective CPUs = 3.00"}},
	}
	for _, tt := range tests {
		if got := percentPolicy(budget("host", tt.eff), tt.req); got != tt.want {
			t.Errorf("percentPolicy(%v, %s) = %+v, want %+v", tt.eff, tt.req.text, got, tt.want)
		}
	}
}

func TestMemoryCap(t *testing.T) {
	noHost := host(2)
	noHost.HostMemory = 0
	tests := []struct {
		name      string
		snap      cgroup.Snapshot
		memPerJob int64
		fit       int
		why       string
		warnings  []string
	}{
		{"no size, no cap", memLimit(host(2), 256*MiB), 0, 0, "", nil},
		{"cgroup limit", memLimit(host(2), 256*MiB), 100 * MiB, 2,
			"0.9 x cgroup v1 memory limit 256 MiB at /mem-test / 100 MiB per job = 2.30", nil},
		{"host memory stands in", host(2), GiB, 3, "0.9 x host memory 4 GiB (no cgroup memory limit) / 1 GiB per job = 3.60", nil},
		{"not even one fits", memLimit(host(2), 256*MiB), 300 * MiB, 1,
			"0.9 x cgroup v1 memory limit 256 MiB at /mem-test / 300 MiB per job = 0.76",
			[]string{"even one job of 300 MiB does not fit in 0.9 x cgroup v1 memory limit 256 MiB at /mem-test; running 1 job anyway"}},
		{"nothing known", noHost, GiB, 0, "",
			[]string{"memory per job given but neither a cgroup memory limit nor the host memory is known; no memory cap applied"}},
	}
	for _, tt := range tests {
		m := memoryCap(tt.snap, tt.memPerJob)
		if m.fit != tt.fit || m.why != tt.why || !slices.Equal(m.warnings, tt.warnings) {
			t.Errorf("%s: %+v\nwant fit %d, why %q, warnings %q", tt.name, m, tt.fit, tt.why, tt.warnings)
		}
	}
}

func TestMemCapApply(t *testing.T) {
	c := choice{n: 4, by: "host", why: "2 x 2.00 = 4.00"}
	tests := []struct {
		m    memCap
		want choice
	}{
		{memCap{}, c},
		{memCap{fit: 2, why: "M"}, choice{n: 2, by: "memory", why: "2 x 2.00 = 4.00; memory: M, caps jobs at 2"}},
		{memCap{fit: 4, why: "M"}, choice{n: 4, by: "host", why: "2 x 2.00 = 4.00; memory: M, no cap"}},
		{memCap{fit: 9, why: "M"}, choice{n: 4, by: "host", why: "2 x 2.00 = 4.00; memory: M, no cap"}},
	}
	for _, tt := range tests {
		if got := tt.m.apply(c); got != tt.want {
			t.Errorf("%+v.apply = %+v, want %+v", tt.m, got, tt.want)
		}
	}
	req := request{n: 4, text: "4", source: "RATION_JOBS"}
	if w := (memCap{fit: 2, why: "M"}).exceeded(req); w != "RATION_JOBS=4 exceeds what memory fits: M, so only 2 jobs" {
		t.Errorf("exceeded: %q", w)
	}
	for _, m := range []memCap{{}, {fit: 4, why: "M"}} {
		if w := m.exceeded(req); w != "" {
			t.Errorf("%+v.exceeded(4) = %q, want none", m, w)
		}
	}
}

func TestRequestedJobs(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "RATION_JOBS" {
				return v
			}
			return "unrelated"
		}
	}
	tests := []struct {
		jobs, env string
		want      request
		err       string
	}{
		{"", "", request{source: "default"}, ""},
		{"3", "", request{n: 3, text: "3", source: "-j"}, ""},
		{" 3 ", "", request{n: 3, text: "3", source: "-j"}, ""},
		{"12.5%", "", request{percent: 12.5, text: "12.5%", source: "-j"}, ""},
		{"", "200%", request{percent: 200, text: "200%", source: "RATION_JOBS"}, ""},
		{"5", "zz", request{n: 5, text: "5", source: "-j"}, ""},
		{"0", "", request{}, `jobs: "0" is not a whole number >= 1, +N, -N or a percentage like 50%`},
		{"", "x", request{}, `RATION_JOBS: "x" is not a whole number >= 1, +N, -N or a percentage like 50%`},
		{"-2", "", request{relative: true, offset: -2, text: "-2", source: "-j"}, ""},
		{"", "-5%", request{}, `RATION_JOBS: "-5%" is not a percentage above 0 like 50%`},
	}
	for _, tt := range tests {
		got, err := requestedJobs(tt.jobs, env(tt.env))
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("requestedJobs(%q, env %q) err = %v, want %q", tt.jobs, tt.env, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("requestedJobs(%q, env %q) = %+v, %v; want %+v", tt.jobs, tt.env, got, err, tt.want)
		}
	}
}

func TestReason(t *testing.T) {
	b := cpuBudget{inputs: []input{{key: "host", value: 2}}, chain: "2 host CPUs"}
	def := choice{n: 4, by: "host", why: "2 x 2.00 = 4.00"}
	tests := []struct {
		c    choice
		want string
	}{
		{def, "jobs=4: 2 host CPUs; 2 x 2.00 = 4.00"},
		{explicit(request{n: 6, text: "6", source: "-j"}, def), "jobs=6: -j 6 given (the default would be 4: 2 host CPUs; 2 x 2.00 = 4.00)"},
		{explicit(request{n: 6, text: "6", source: "RATION_JOBS"}, def), "jobs=6: RATION_JOBS=6 given (the default would be 4: 2 host CPUs; 2 x 2.00 = 4.00)"},
	}
	for _, tt := range tests {
		if got := reason(tt.c, b); got != tt.want {
			t.Errorf("reason = %q, want %q", got, tt.want)
		}
	}
	if c := explicit(request{n: 6, text: "6", source: "-j"}, def); c.n != 6 || c.by != "explicit" {
		t.Errorf("explicit = %+v", c)
	}
}

// TestDecideNoCgroups is the decision on an OS without cgroups, which
// this Linux test can only reach through the reading's NoCgroups.
func TestDecideNoCgroups(t *testing.T) {
	s := cgroup.Snapshot{HostCPUs: 8, HostCPUsSource: "runtime.NumCPU()", AffinityCPUs: 8, AffinitySource: "runtime.NumCPU()",
		HostMode: "unavailable", NoCgroups: "no cgroups on darwin", Warnings: []string{}}
	d, err := DecideFrom(s, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := "jobs=8: 8 host CPUs, no cgroups on darwin; 2 x 8.00 = 16.00, capped at 8"
	if d.Jobs != 8 || d.DecidedBy != "max" || d.Reason != want || d.CgroupVersion != nil || len(d.Warnings) != 0 {
		t.Errorf("jobs=%d by %s, version %v, warnings %q\nreason %q\nwant   %q", d.Jobs, d.DecidedBy, d.CgroupVersion, d.Warnings, d.Reason, want)
	}
}

// TestReasonShowsTheFloor: the reason's arithmetic must lead to the job
// count it explains. Two decimals rounded to nearest made a quota of
// 199999/100000 us read "2.00 CPUs < 2 host CPUs; 2 x 2.00 = 4.00" for
// jobs=3 (seen with a live v1 cgroup); amounts are now rounded down.
func TestReasonShowsTheFloor(t *testing.T) {
	q := quota(host(2), 1.99999)
	q.CPUQuotaUs = 199999
	tests := []struct {
		name      string
		snap      cgroup.Snapshot
		jobs      string
		memPerJob int64
		want      string
	}{
		{"quota just under 2 CPUs", q, "", 0,
			"jobs=3: cgroup v1 CPU quota 1.99 CPUs (199999/100000 us) at /ration-test < 2 host CPUs; 2 x 1.99 = 3.99"},
		{"N% just under 2 jobs", host(2), "99.9%", 0,
			"jobs=1: 2 host CPUs, no CPU quota in cgroup v1 /; -j 99.9% x 2.00 effective CPUs = 1.99"},
		{"memory just under 3 jobs", memLimit(host(8), 1000*MiB), "", 300*MiB + 400*1024, // 0.9 x 1000 / 300.39 = 2.996
			"jobs=2: 8 host CPUs, no CPU quota in cgroup v1 /; 2 x 8.00 = 16.00, capped at 8; " +
				"memory: 0.9 x cgroup v1 memory limit 1000 MiB at /mem-test / 300.39 MiB per job = 2.99, caps jobs at 2"},
		{"exact values stay exact", quota(host(8), 1.45), "", 0,
			"jobs=2: cgroup v1 CPU quota 1.45 CPUs (145000/100000 us) at /ration-test < 8 host CPUs; 2 x 1.45 = 2.90"},
	}
	for _, tt := range tests {
		d, err := DecideFrom(tt.snap, tt.jobs, tt.memPerJob)
		if err != nil {
			t.Fatal(err)
		}
		if d.Reason != tt.want {
			t.Errorf("%s:\n got  %q\n want %q", tt.name, d.Reason, tt.want)
		}
	}
}

// TestRelativeJobs: GNU parallel's -j +N and -j -N (the effective CPUs,
// rounded down, plus or minus N) are the policy's own, so that the reason
// explains them and a decision re-made during a run (DecideFrom, with the
// same jobs value) counts from the CPUs it then finds. They were turned
// into a fixed number by the command line before, which limits refused to
// explain ("+3" is not a whole number) and a re-decision never revisited.
func TestRelativeJobs(t *testing.T) {
	tests := []struct {
		name      string
		snap      cgroup.Snapshot
		jobs      string
		memPerJob int64
		want      int
		by        string
		why       string
	}{
		{"plus", quota(host(8), 4), "+2", 0, 6, "cpu_quota", "-j +2: 4 effective CPUs + 2 = 6"},
		{"minus", host(8), "-3", 0, 5, "host", "-j -3: 8 effective CPUs - 3 = 5"},
		{"plus zero", host(2), "+0", 0, 2, "host", "-j +0: 2 effective CPUs + 0 = 2"},
		{"fractional CPUs round down", quota(host(8), 1.5), "+2", 0, 3, "cpu_quota", "-j +2: floor(1.50 effective CPUs) + 2 = 3"},
		{"not capped at 8", host(16), "+4", 0, 20, "host", "-j +4: 16 effective CPUs + 4 = 20"},
		{"no slot left is raised to 1", host(2), "-5", 0, 1, "min", "-j -5: 2 effective CPUs - 5 = -3, raised to 1"},
		{"memory caps it, as N%", memLimit(host(8), 1000*MiB), "+2", 300 * MiB, 3, "memory",
			"-j +2: 8 effective CPUs + 2 = 10; memory: 0.9 x cgroup v1 memory limit 1000 MiB at /mem-test / 300 MiB per job = 3.00, caps jobs at 3"},
	}
	for _, tt := range tests {
		d, err := DecideFrom(tt.snap, tt.jobs, tt.memPerJob)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if d.Jobs != tt.want || d.DecidedBy != tt.by || !strings.HasSuffix(d.Reason, "; "+tt.why) || d.JobsSource != "-j" {
			t.Errorf("%s: jobs=%d by %s source %s, reason %q\nwant jobs=%d by %s, reason ending %q", tt.name, d.Jobs, d.DecidedBy, d.JobsSource, d.Reason, tt.want, tt.by, tt.why)
		}
	}
	// The same value re-decided on a smaller machine follows it.
	if d, err := DecideFrom(quota(host(8), 1), "+2", 0); err != nil || d.Jobs != 3 {
		t.Errorf("-j +2 on 1 CPU: jobs=%d, %v; want 3", d.Jobs, err)
	}
	for _, s := range []string{"+2", "-1", " +0 ", "-0"} {
		if err := CheckJobs(s); err != nil {
			t.Errorf("CheckJobs(%q) = %v, want nil", s, err)
		}
	}
	for _, s := range []string{"+", "++2", "+-2", "+ 2", "+2.5", "+x", "-2%"} {
		if err := CheckJobs(s); err == nil {
			t.Errorf("CheckJobs(%q) = nil, want an error", s)
		}
	}
}

// TestRelativeJobsNoSlot: with Options.RefuseNoSlot (ration run and ration
// limits, as GNU parallel) a relative request that leaves no job slot is
// an error naming it and the arithmetic; RATION_JOBS takes it too.
func TestRelativeJobsNoSlot(t *testing.T) {
	root := filepath.Join("..", "cgroup", "testdata", "v2") // 1.5 CPUs
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "RATION_JOBS" {
				return v
			}
			return ""
		}
	}
	_, err := Decide(Options{FSRoot: root, Jobs: "-2", RefuseNoSlot: true, Getenv: env("")})
	if want := "-j -2 leaves no job slot: floor(1.50 effective CPUs) - 2 = -1"; err == nil || err.Error() != want {
		t.Errorf("-j -2 on 1.5 CPUs: err = %v, want %q", err, want)
	}
	_, err = Decide(Options{FSRoot: root, RefuseNoSlot: true, Getenv: env("-1")})
	if want := "RATION_JOBS=-1 leaves no job slot: floor(1.50 effective CPUs) - 1 = 0"; err == nil || err.Error() != want {
		t.Errorf("RATION_JOBS=-1 on 1.5 CPUs: err = %v, want %q", err, want)
	}
	d, err := Decide(Options{FSRoot: root, Getenv: env("+1")})
	if err != nil || d.Jobs != 2 || d.JobsSource != "RATION_JOBS" || !strings.HasSuffix(d.Reason, "; RATION_JOBS=+1: floor(1.50 effective CPUs) + 1 = 2") {
		t.Errorf("RATION_JOBS=+1: jobs=%d source %s, %v; reason %q", d.Jobs, d.JobsSource, err, d.Reason)
	}
	d, err = Decide(Options{FSRoot: root, Jobs: "-2", Getenv: env("")})
	if err != nil || d.Jobs != 1 || d.DecidedBy != "min" {
		t.Errorf("-j -2 without RefuseNoSlot: jobs=%d by %s, %v; want 1 by min", d.Jobs, d.DecidedBy, err)
	}
}
