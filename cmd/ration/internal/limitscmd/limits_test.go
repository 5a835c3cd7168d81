package limitscmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ration-run/ration/internal/testutil"
)

func runLimits(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("RATION_JOBS", "")
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestLimitsUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-j", "zero"}, "ration limits: --jobs: " + jobsFlagErr("zero") + "\n"},
		{[]string{"--jobs=-1.5"}, "ration limits: --jobs: " + jobsFlagErr("-1.5") + "\n"},
		{[]string{"--mem-per-job", "lots"}, `invalid argument "lots" for "--mem-per-job" flag: want a number with an optional unit`},
		{[]string{"--mem-per-job", "-5M"}, `invalid argument "-5M" for "--mem-per-job" flag: `},
		{[]string{"--fs-root", "/does/not/exist"}, "--fs-root /does/not/exist: not a directory"},
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"-j"}, "flag needs an argument"},
	} {
		code, out, errs := runLimits(t, tt.args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, tt.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("limits %q: exit %d, stdout %q, stderr %q; want 255, one line containing %q", tt.args, code, out, errs, tt.want)
		}
	}
	t.Setenv("RATION_JOBS", "x")
	var out, errb bytes.Buffer
	if code := Main(nil, nil, &out, &errb); code != exitUsage || errb.String() != "ration limits: RATION_JOBS: "+jobsErr("x")+"\n" {
		t.Errorf("bad RATION_JOBS: exit %d, stderr %q", code, errb.String())
	}
}

// TestLimitsTakesRunsValues: `ration limits` says what `ration run` would
// do with the same flags, so it takes the -j and --mem-per-job values run
// takes: GNU's -j 0 (as many as possible: jobsZero slots) and
// --mem-per-job auto (learned while running: no cap now).
func TestLimitsTakesRunsValues(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..", "cgroup", "testdata", "v2-nested")
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"-j", "0"}, []string{"jobs:            250 (-j, decided by explicit)", "-j 0 given (as many as possible: 250 slots"}},
		{[]string{"--mem-per-job", "auto"}, []string{"mem per job:     auto", "jobs:            2 (default, decided by cpu_quota)"}},
	} {
		code, out, errs := runLimits(t, append([]string{"--fs-root", root}, tt.args...)...)
		if code != 0 || errs != "" {
			t.Errorf("limits %q: exit %d, stderr %q; want 0 as ration run", tt.args, code, errs)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("limits %q: output lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
}

// TestLimitsHybridWithoutCPU: on a hybrid host whose cpu hierarchy is not
// mounted (a container given only some v1 controllers), the cgroup line
// names the missing controller instead of a "cpu v0".
func TestLimitsHybridWithoutCPU(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "..", "..", "..", "cgroup", "testdata", "hybrid"))); err != nil {
		t.Fatal(err)
	}
	mi := filepath.Join(root, "proc/self/mountinfo")
	data, err := os.ReadFile(mi)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.Contains(l, " /sys/fs/cgroup/cpu ") {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(mi, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runLimits(t, "--fs-root", root)
	if want := "cgroup:          v1 (hybrid: no cpu controller, memory v1)\n"; code != 0 || errs != "" || !strings.Contains(out, want) {
		t.Errorf("exit %d, stderr %q, output:\n%s\nwant the line %q", code, errs, out, want)
	}
}

func TestLimitsFixtureText(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..", "cgroup", "testdata", "v2-nested")
	code, out, errs := runLimits(t, "--fs-root", root, "--mem-per-job", "300MiB")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"cgroup:          v2\n",
		"cpu quota:       1.00 CPUs (100000/100000 us) at /kubepods/pod1",
		"leaf cpu quota:  4.00 CPUs (what the Go runtime sees)",
		"host cpus:       16",
		"effective cpus:  1.00",
		"memory limit:    1 GiB (1073741824 bytes) at /kubepods/pod1",
		"mem per job:     300 MiB",
		"jobs:            2 (default, decided by cpu_quota)",
		"reason:          jobs=2: cgroup v2 CPU quota 1.00 CPUs (100000/100000 us) at /kubepods/pod1 < 16 host CPUs (affinity 16); 2 x 1.00 = 2.00; memory: 0.9 x cgroup v2 memory limit 1 GiB at /kubepods/pod1 / 300 MiB per job = 3.07, no cap",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "warning:") {
		t.Errorf("unexpected warning:\n%s", out)
	}
}

func TestLimitsFixtureJSONWarnings(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join("..", "..", "..", "..", "cgroup", "testdata", "v1")
	if err := os.CopyFS(root, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "sys/fs/cgroup/cpu,cpuacct/ration-test/cpu.cfs_quota_us")
	if err := os.WriteFile(bad, []byte("half\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runLimits(t, "--json", "--fs-root", root, "-j", "150%")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var d struct {
		CgroupVersion *int     `json:"cgroup_version"`
		CPUQuota      *float64 `json:"cpu_quota"`
		Jobs          int      `json:"jobs"`
		JobsSource    string   `json:"jobs_source"`
		Warnings      []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	// The bad quota falls back to the 2 host CPUs: 150% of 2 = 3.
	if d.CgroupVersion == nil || *d.CgroupVersion != 1 || d.CPUQuota != nil || d.Jobs != 3 || d.JobsSource != "-j" {
		t.Errorf("decision %s", out)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], bad) || !strings.Contains(d.Warnings[0], `want an integer, got "half"`) {
		t.Errorf("warnings %q, want one naming %s", d.Warnings, bad)
	}
}

func TestLimitsLiveText(t *testing.T) {
	code, out, errs := runLimits(t)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{"host cpus:", "effective cpus:", "jobs:", "reason:          jobs="} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestLimitsRealCPUQuota: real CPU quotas of
// 0.5, 1, 1.5 and 3 CPUs and none give 1, 2, 3, 4, 4 jobs on 2 CPUs.
func TestLimitsRealCPUQuota(t *testing.T) {
	ownCgroup(t)
	dir, _ := testutil.ChildCgroup(t, "cpu") // before the build: it may skip
	bin := buildRation(t)
	// Read after ChildCgroup: on v2 the test process may have moved into a
	// leaf beside dir (testutil.DelegateCgroups); testutil.CgroupPath takes that.
	s := ownCgroup(t)
	cpus := float64(s.AffinityCPUs)
	if s.CPUQuota > 0 {
		cpus = math.Min(cpus, s.CPUQuota)
	}
	for _, q := range []float64{0.5, 1, 1.5, 3, 0} {
		t.Run(fmt.Sprintf("quota=%v", q), func(t *testing.T) {
			testutil.SetCPUQuota(t, dir, q)
			m := limitsIn(t, bin, dir)
			eff := cpus
			if q > 0 {
				eff = math.Min(eff, q)
			}
			want := max(1, min(int(math.Floor(2*eff)), 8))
			if s.AffinityCPUs == 2 && s.CPUQuota == 0 {
				want = map[float64]int{0.5: 1, 1: 2, 1.5: 3, 3: 4, 0: 4}[q] // the numbers
			}
			if got := m["jobs"].(float64); int(got) != want {
				t.Errorf("jobs = %v, want %d; reason: %v", got, want, m["reason"])
			}
			if q > 0 && q < cpus {
				if m["cpu_quota"] != q || !strings.Contains(m["reason"].(string), "at "+testutil.CgroupPath(s.CPUCgroup, s.CPUDir, dir)) {
					t.Errorf("cpu_quota %v, reason %q: want %v at the child cgroup", m["cpu_quota"], m["reason"], q)
				}
			}
			t.Logf("%v", m["reason"])
		})
	}
}

// TestLimitsRealParentQuota puts the quota on a parent and runs ration in
// an unlimited child: the Go runtime would miss this limit, ration must not.
func TestLimitsRealParentQuota(t *testing.T) {
	if s := ownCgroup(t); s.CPUQuota > 0 && s.CPUQuota <= 0.5 {
		t.Skip("own cgroup already has a quota below 0.5")
	}
	parent, _ := testutil.ChildCgroup(t, "cpu")
	// On v2 the child has a cpu.max of its own (unlimited, "max") only when
	// the parent enables the controller for it: the leaf ration reads.
	testutil.EnableControllers(t, parent)
	child := testutil.ChildCgroupOf(t, parent)
	testutil.SetCPUQuota(t, parent, 0.5)
	s := ownCgroup(t) // after ChildCgroup, as in TestLimitsRealCPUQuota
	bin := buildRation(t)
	m := limitsIn(t, bin, child)
	if m["jobs"].(float64) != 1 || m["cpu_quota"] != 0.5 || m["leaf_cpu_quota"] != nil ||
		m["cpu_quota_cgroup"] != testutil.CgroupPath(s.CPUCgroup, s.CPUDir, parent) {
		t.Errorf("jobs %v cpu_quota %v leaf %v at %v; want 1, 0.5, null at %s", m["jobs"], m["cpu_quota"],
			m["leaf_cpu_quota"], m["cpu_quota_cgroup"], testutil.CgroupPath(s.CPUCgroup, s.CPUDir, parent))
	}
}

// TestLimitsRealMemory: 256 MiB and 100 MiB per job give 2 jobs, and
// ration run would give the jobs a cgroup of 256 MiB less its reserve.
func TestLimitsRealMemory(t *testing.T) {
	s := ownCgroup(t)
	if s.MemoryLimit > 0 && s.MemoryLimit < 256<<20 {
		t.Skip("own memory limit is below 256 MiB")
	}
	dir, _ := testutil.ChildCgroup(t, "memory")
	testutil.SetMemoryLimit(t, dir, 256<<20)
	bin := buildRation(t)
	m := limitsIn(t, bin, dir, "--mem-per-job", "100MiB")
	want := 2
	if cpus := float64(s.AffinityCPUs); s.CPUQuota == 0 && 2*cpus < 2 {
		want = 1
	}
	if m["jobs"].(float64) != float64(want) || m["memory_limit_bytes"] != float64(256<<20) || m["memory_max_jobs"] != 2.0 {
		t.Errorf("jobs %v memory_limit_bytes %v memory_max_jobs %v; want %d, %d, 2; reason %v",
			m["jobs"], m["memory_limit_bytes"], m["memory_max_jobs"], want, 256<<20, m["reason"])
	}
	// ration run would give the jobs a cgroup of their own, below 256 MiB
	// by the reserve.
	jc, _ := m["jobs_cgroup"].(map[string]any)
	limit, _ := jc["limit_bytes"].(float64)
	reserve, _ := jc["reserve_bytes"].(float64)
	if reserve < 12<<20 || reserve > 64<<20 || limit+reserve != 256<<20 {
		t.Errorf("jobs_cgroup %v: want a limit of 256 MiB less a reserve of 12 to 64 MiB", m["jobs_cgroup"])
	}
	t.Logf("%v", m["reason"])
}

// TestLimitsRealCgroupNamespace runs `ration limits --json` in a cgroup
// namespace of its own (unshare -C) inside a child cgroup with a 0.5-CPU
// quota, the hierarchy staying mounted from outside the namespace. The Go
// runtime finds no cgroup there (its cgroupOK stays false: it matches the
// mount's root "/.." as a prefix of "/", which fails) and keeps GOMAXPROCS
// at the CPU count; ration finds the quota. The output must say that the
// runtime does not see it and give the GOMAXPROCS ration runs with, the
// runtime's rounding of the quota (ceil, at least 2, at most the CPUs).
// Before, it claimed the quota as the leaf's that the runtime sees, and
// ration run kept the host's GOMAXPROCS.
func TestLimitsRealCgroupNamespace(t *testing.T) {
	s := ownCgroup(t)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare")
	}
	dir, _ := testutil.ChildCgroup(t, "cpu")
	testutil.SetCPUQuota(t, dir, 0.5)
	bin := buildRation(t)
	script := `echo $$ > "$1/cgroup.procs" && shift && exec "$@"`
	cmd := exec.Command("/bin/sh", "-c", script, "sh", dir, unshare, "-C", bin, "limits", "--json")
	cmd.Env = append(os.Environ(), "RATION_JOBS=", "GOMAXPROCS=", "GODEBUG=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ration limits in a cgroup namespace: %v\n%s", err, stderr.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if m["cpu_quota"] != 0.5 || m["cpu_cgroup"] != "/" {
		t.Fatalf("cpu_quota %v in %v: want 0.5 in the namespace's root /\n%s", m["cpu_quota"], m["cpu_cgroup"], out)
	}
	want := float64(min(s.AffinityCPUs, 2))
	note, _ := m["gomaxprocs_note"].(string)
	if m["cpu_outside_namespace"] != true || m["gomaxprocs"] != want || !strings.Contains(note, "cgroup namespace") {
		t.Errorf("cpu_outside_namespace %v, gomaxprocs %v (%q); want true, %v, and a note naming the cgroup namespace\n%s",
			m["cpu_outside_namespace"], m["gomaxprocs"], note, want, out)
	}
}

// TestLimitsJobCgroupOff: with RATION_JOB_CGROUP=0, which turns off
// ration run's memory cgroup for its jobs, `ration limits` says the jobs
// share ration's cgroup because of it (docs/kubernetes.md: "ration limits
// says which"), in the text and in jobs_cgroup. Before, it said what it
// would have done without the variable, here "no memory limit", and on a
// host with a writable limit that a cgroup would be made.
func TestLimitsJobCgroupOff(t *testing.T) {
	getenv := func(k string) string {
		if k == jobCgroupEnv {
			return "0"
		}
		return ""
	}
	var out, errb bytes.Buffer
	if code := limitsMain([]string{"--json"}, getenv, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m struct {
		JobsCgroup struct {
			LimitBytes int64  `json:"limit_bytes"`
			None       string `json:"none"`
		} `json:"jobs_cgroup"`
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.JobsCgroup.LimitBytes != 0 || !strings.Contains(m.JobsCgroup.None, "RATION_JOB_CGROUP=0") {
		t.Errorf("jobs_cgroup %+v; want none, naming RATION_JOB_CGROUP=0", m.JobsCgroup)
	}
	out.Reset()
	if code := limitsMain(nil, getenv, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "jobs' cgroup:    none, jobs share ration's (RATION_JOB_CGROUP=0"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}

// TestLimitsMemoryAdmissionOff: with RATION_MEM_ADMISSION=0, ration run
// starts jobs as the CPU policy allows; ration limits must not promise
// that it "starts a job only while one more fits".
func TestLimitsMemoryAdmissionOff(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..", "cgroup", "testdata", "v2")
	for _, tc := range []struct{ env, want string }{
		{"", "ration run starts a job only while one more fits"},
		{"0", "RATION_MEM_ADMISSION=0 turns ration run's memory admission off"},
		{"off", "RATION_MEM_ADMISSION=off turns ration run's memory admission off"},
	} {
		getenv := func(k string) string {
			if k == memoryAdmissionEnv {
				return tc.env
			}
			return ""
		}
		var out, errb bytes.Buffer
		if code := limitsMain([]string{"--fs-root", root}, getenv, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		var binding string
		for l := range strings.Lines(out.String()) {
			if strings.HasPrefix(l, "memory binding:") {
				binding = l
			}
		}
		if !strings.Contains(binding, tc.want) {
			t.Errorf("%s=%q: %q, want it to say %q", memoryAdmissionEnv, tc.env, binding, tc.want)
		}
	}
}

// TestLimitsAncestorsHidden: in a container's cgroup namespace, ration
// limits says that a limit above the container (a pod's) cannot be seen,
// and how to pass one in.
func TestLimitsAncestorsHidden(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..", "cgroup", "testdata", "v2-container")
	code, out, errs := runLimits(t, "--fs-root", root)
	if code != 0 || !strings.Contains(out, "above:") || !strings.Contains(out, "cannot be read; pass one in with -j or RATION_JOBS") {
		t.Errorf("exit %d; no line saying the cgroups above are hidden:\n%s%s", code, out, errs)
	}
	code, out, errs = runLimits(t, "--fs-root", root, "--json")
	if code != 0 || !strings.Contains(out, `"ancestors_hidden": true`) {
		t.Errorf("exit %d; JSON without ancestors_hidden true:\n%s%s", code, out, errs)
	}
	_, out, _ = runLimits(t, "--fs-root", filepath.Join("..", "..", "..", "..", "cgroup", "testdata", "v2"))
	if strings.Contains(out, "above:") {
		t.Errorf("the host's own hierarchy says its ancestors are hidden:\n%s", out)
	}
}
