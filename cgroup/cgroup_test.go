package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// want lists the Snapshot fields a fixture test checks. Zero values are
// checked too: a fixture without a limit must report none.
type want struct {
	version, cpuVersion, memVersion int
	hybrid                          bool
	cpuCgroup, cpuDir               string // cpuDir relative to the fixture root
	quota, leafQuota                float64
	quotaUs, periodUs               int64
	quotaCgroup, quotaFile          string // quotaFile relative to the root
	cpuset                          []int
	affinity, host                  int
	memCgroup                       string
	memLimit, memHigh               int64
	memLimitCgroup                  string
	usage, peak, oomKills           int64
	nrPeriods, nrThrottled          int64
	throttled                       time.Duration
	outside                         bool     // CPUOutsideNamespace
	warnings                        []string // substrings, one per warning, in order
}

func TestReadFixtures(t *testing.T) {
	const MiB = 1 << 20
	tests := []struct {
		name string
		want want
	}{
		{"v1", want{
			version: 1, cpuVersion: 1, memVersion: 1,
			cpuCgroup: "/ration-test", cpuDir: "sys/fs/cgroup/cpu,cpuacct/ration-test",
			quota: 0.5, leafQuota: 0.5, quotaUs: 50000, periodUs: 100000,
			quotaCgroup: "/ration-test", quotaFile: "sys/fs/cgroup/cpu,cpuacct/ration-test/cpu.cfs_quota_us",
			cpuset: []int{0, 1}, affinity: 2, host: 2,
			memCgroup: "/ration-test", memLimit: 256 * MiB, memLimitCgroup: "/ration-test",
			usage: 100 * MiB, peak: 200 * MiB, oomKills: 3,
			nrPeriods: 120, nrThrottled: 30, throttled: 1500 * time.Millisecond,
		}},
		{"v2", want{
			version: 2, cpuVersion: 2, memVersion: 2,
			cpuCgroup: "/system.slice/app.service", cpuDir: "sys/fs/cgroup/system.slice/app.service",
			quota: 1.5, leafQuota: 1.5, quotaUs: 150000, periodUs: 100000,
			quotaCgroup: "/system.slice/app.service", quotaFile: "sys/fs/cgroup/system.slice/app.service/cpu.max",
			cpuset: []int{0, 1, 2, 3, 4, 5, 6, 7}, affinity: 8, host: 8,
			memCgroup: "/system.slice/app.service", memLimit: 512 * MiB, memHigh: 384 * MiB,
			memLimitCgroup: "/system.slice/app.service",
			usage:          1 * MiB, peak: 2 * MiB, oomKills: 1,
			nrPeriods: 50, nrThrottled: 5, throttled: 250 * time.Millisecond,
		}},
		// Hybrid: the v2 hierarchy is mounted but has no controllers, so
		// CPU and memory come from v1.
		{"hybrid", want{
			version: 1, cpuVersion: 1, memVersion: 1, hybrid: true,
			cpuCgroup: "/job", cpuDir: "sys/fs/cgroup/cpu/job",
			quota: 3, leafQuota: 3, quotaUs: 300000, periodUs: 100000,
			quotaCgroup: "/job", quotaFile: "sys/fs/cgroup/cpu/job/cpu.cfs_quota_us",
			affinity: 4, host: 4, memCgroup: "/job",
		}},
		// The pod's 1 CPU binds the container's 4; the runtime sees 4.
		{"v2-nested", want{
			version: 2, cpuVersion: 2, memVersion: 2,
			cpuCgroup: "/kubepods/pod1/ctr", cpuDir: "sys/fs/cgroup/kubepods/pod1/ctr",
			quota: 1, leafQuota: 4, quotaUs: 100000, periodUs: 100000,
			quotaCgroup: "/kubepods/pod1", quotaFile: "sys/fs/cgroup/kubepods/pod1/cpu.max",
			affinity: 16, host: 16, memCgroup: "/kubepods/pod1/ctr",
			memLimit: 1024 * MiB, memLimitCgroup: "/kubepods/pod1",
		}},
		{"v2-namespace", want{
			version: 2, cpuVersion: 2, memVersion: 2,
			cpuCgroup: "/../sibling/job", cpuDir: "sys/fs/cgroup",
			quota: 2, leafQuota: 2, quotaUs: 200000, periodUs: 100000,
			quotaCgroup: "/", quotaFile: "sys/fs/cgroup/cpu.max",
			affinity: 4, host: 4, memCgroup: "/../sibling/job",
			outside: true, // the Go runtime skips a path starting with /..
			warnings: []string{
				"cgroup path /../sibling/job is outside this cgroup namespace",
			},
		}},
		// The process is at the root of its cgroup namespace ("/"), and the
		// hierarchy was mounted outside it: the mount's root is "/../..".
		// The one directory two levels below the mount point is the
		// process's cgroup (a live read also checks cgroup.procs).
		{"v2-namespace-host-mount", want{
			version: 2, cpuVersion: 2, memVersion: 2,
			cpuCgroup: "/", cpuDir: "sys/fs/cgroup/kubepods/pod1",
			quota: 1.5, leafQuota: 1.5, quotaUs: 150000, periodUs: 100000,
			quotaCgroup: "/../../kubepods/pod1", quotaFile: "sys/fs/cgroup/kubepods/pod1/cpu.max",
			affinity: 8, host: 8, memCgroup: "/",
			memLimit: 512 * MiB, memLimitCgroup: "/../../kubepods/pod1",
			outside: true, // the Go runtime finds no cgroup here
		}},
		// A path outside the namespace (/../../../../init.scope) on a host
		// with two cgroup2 mounts: only the mount whose root is the
		// longest matching prefix (/../../../..) resolves it, and there
		// init.scope holds a 1-CPU quota. The first mount must not be
		// taken just because it comes first.
		{"v2-two-mounts", want{
			version: 2, cpuVersion: 2, memVersion: 2,
			cpuCgroup: "/../../../../init.scope", cpuDir: "sys/fs/cgroup2/init.scope",
			quota: 1, leafQuota: 1, quotaUs: 100000, periodUs: 100000,
			quotaCgroup: "/../../../../init.scope", quotaFile: "sys/fs/cgroup2/init.scope/cpu.max",
			affinity: 8, host: 8, memCgroup: "/../../../../init.scope",
		}},
		// Mount root /docker/abc, an escaped mount point, and the same
		// hierarchy mounted three times: the longest matching root wins.
		// Period 50000; memory 8 GiB >= 4 GiB host memory = unlimited.
		{"v1-docker", want{
			version: 1, cpuVersion: 1, memVersion: 1,
			cpuCgroup: "/docker/abc/job", cpuDir: "sys/fs/cgroup/cpu and acct/job",
			quota: 1.5, leafQuota: 1.5, quotaUs: 75000, periodUs: 50000,
			quotaCgroup: "/docker/abc/job", quotaFile: "sys/fs/cgroup/cpu and acct/job/cpu.cfs_quota_us",
			affinity: 8, host: 8, memCgroup: "/docker/abc",
		}},
		// Docker on v1 with --cgroup-parent: the container's own cgroup is
		// the mount root and has no limit; its parent's 512 MiB is seen
		// only through hierarchical_memory_limit.
		{"v1-parent-limit", want{
			version: 1, memVersion: 1, affinity: 4, host: 4,
			memCgroup: "/ci.slice/job42", memLimit: 512 * MiB, memLimitCgroup: "an ancestor of /ci.slice/job42",
			usage: 1 * MiB,
		}},
		// cpuset 0-1,4 of 8; "max" quota.
		{"v2-cpuset", want{
			version: 2, cpuVersion: 2, memVersion: 2,
			cpuCgroup: "/pinned", cpuDir: "sys/fs/cgroup/pinned",
			cpuset: []int{0, 1, 4}, affinity: 8, host: 8, memCgroup: "/pinned",
		}},
		{"none", want{affinity: 4, host: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join("testdata", tt.name)
			s, err := Reader{Root: root}.Read()
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			checkSnapshot(t, root, s, tt.want)
		})
	}
}

func checkSnapshot(t *testing.T, root string, s Snapshot, w want) {
	t.Helper()
	rel := func(p string) string {
		if p == "" {
			return ""
		}
		r, err := filepath.Rel(root, p)
		if err != nil {
			return "?" + p
		}
		return r
	}
	type kv struct {
		name      string
		got, want any
	}
	for _, c := range []kv{
		{"Version", s.Version, w.version}, {"CPUVersion", s.CPUVersion, w.cpuVersion},
		{"MemoryVersion", s.MemoryVersion, w.memVersion}, {"Hybrid", s.Hybrid, w.hybrid},
		{"CPUCgroup", s.CPUCgroup, w.cpuCgroup}, {"CPUDir", rel(s.CPUDir), w.cpuDir},
		{"CPUQuota", s.CPUQuota, w.quota}, {"LeafCPUQuota", s.LeafCPUQuota, w.leafQuota},
		{"CPUQuotaUs", s.CPUQuotaUs, w.quotaUs}, {"CPUPeriodUs", s.CPUPeriodUs, w.periodUs},
		{"CPUQuotaCgroup", s.CPUQuotaCgroup, w.quotaCgroup}, {"CPUQuotaFile", rel(s.CPUQuotaFile), w.quotaFile},
		{"AffinityCPUs", s.AffinityCPUs, w.affinity}, {"HostCPUs", s.HostCPUs, w.host},
		{"MemoryCgroup", s.MemoryCgroup, w.memCgroup},
		{"MemoryLimit", s.MemoryLimit, w.memLimit}, {"MemoryHigh", s.MemoryHigh, w.memHigh},
		{"MemoryLimitCgroup", s.MemoryLimitCgroup, w.memLimitCgroup},
		{"MemoryUsage", s.MemoryUsage, w.usage}, {"MemoryPeak", s.MemoryPeak, w.peak},
		{"OOMKills", s.OOMKills, w.oomKills}, {"NrPeriods", s.NrPeriods, w.nrPeriods},
		{"NrThrottled", s.NrThrottled, w.nrThrottled}, {"ThrottledTime", s.ThrottledTime, w.throttled},
		{"CPUOutsideNamespace", s.CPUOutsideNamespace, w.outside},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if !slices.Equal(s.CPUSet, w.cpuset) {
		t.Errorf("CPUSet = %v, want %v", s.CPUSet, w.cpuset)
	}
	checkWarnings(t, s.Warnings, w.warnings)
}

func checkWarnings(t *testing.T, got, want []string) {
	t.Helper()
	if got == nil {
		t.Errorf("Warnings is nil, want a non-nil slice")
	}
	if len(got) != len(want) {
		t.Errorf("got %d warnings, want %d:\n  got:  %q\n  want: %q", len(got), len(want), got, want)
		return
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d = %q, want it to contain %q", i, got[i], want[i])
		}
	}
}

// copyTree copies a fixture into a temporary directory so a test can
// damage one file.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestMalformed damages one file of a good fixture per case: each must
// give exactly one warning naming the file, and the reading must fall back
// to what the remaining files say.
func TestMalformed(t *testing.T) {
	tests := []struct {
		name, fixture, file, content string
		warning                      string // substring; the file name is checked too
		check                        func(t *testing.T, s Snapshot)
	}{
		{"v1 quota not a number", "v1", "sys/fs/cgroup/cpu,cpuacct/ration-test/cpu.cfs_quota_us", "fifty\n",
			`want an integer, got "fifty"`, noQuota},
		{"v1 quota empty (truncated)", "v1", "sys/fs/cgroup/cpu,cpuacct/ration-test/cpu.cfs_quota_us", "",
			"empty", noQuota},
		{"v1 period zero", "v1", "sys/fs/cgroup/cpu,cpuacct/ration-test/cpu.cfs_period_us", "0\n",
			"not positive", noQuota},
		{"v1 quota zero", "v1", "sys/fs/cgroup/cpu,cpuacct/ration-test/cpu.cfs_quota_us", "0\n",
			"quota 0 is not a valid limit", noQuota},
		{"v1 period missing", "v1", "sys/fs/cgroup/cpu,cpuacct/ration-test/cpu.cfs_period_us", "<delete>",
			"missing next to", noQuota},
		{"v1 oom_control garbage", "v1", "sys/fs/cgroup/memory/ration-test/memory.oom_control", "oom_kill\n",
			"want \"KEY VALUE\"", func(t *testing.T, s Snapshot) { eq(t, "OOMKills", s.OOMKills, int64(0)) }},
		{"v1 usage negative", "v1", "sys/fs/cgroup/memory/ration-test/memory.usage_in_bytes", "-5\n",
			"negative", func(t *testing.T, s Snapshot) { eq(t, "MemoryUsage", s.MemoryUsage, int64(0)) }},
		{"v1 memory limit garbage", "v1", "sys/fs/cgroup/memory/ration-test/memory.limit_in_bytes", "256M\n",
			"want an integer", func(t *testing.T, s Snapshot) { eq(t, "MemoryLimit", s.MemoryLimit, int64(0)) }},
		{"v1 cpuset garbage falls back to cpuset.cpus", "v1", "sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-x\n",
			"bad CPU number", func(t *testing.T, s Snapshot) { eq(t, "CPUSetFile", filepath.Base(s.CPUSetFile), "cpuset.cpus") }},
		{"v2 cpu.max truncated", "v2", "sys/fs/cgroup/system.slice/app.service/cpu.max", "150000\n",
			`want "QUOTA PERIOD"`, noQuota},
		{"v2 cpu.max bad quota", "v2", "sys/fs/cgroup/system.slice/app.service/cpu.max", "-5 100000\n",
			"bad quota", noQuota},
		{"v2 cpu.max bad period", "v2", "sys/fs/cgroup/system.slice/app.service/cpu.max", "150000 0\n",
			"bad period", noQuota},
		{"v2 cpu.max unreadable", "v2", "sys/fs/cgroup/system.slice/app.service/cpu.max", "<dir>",
			"unreadable", noQuota},
		{"v2 cpu.stat garbage", "v2", "sys/fs/cgroup/system.slice/app.service/cpu.stat", "nr_periods many\n",
			"not an integer", func(t *testing.T, s Snapshot) { eq(t, "NrPeriods", s.NrPeriods, int64(0)) }},
		{"v2 memory.max with unit", "v2", "sys/fs/cgroup/system.slice/app.service/memory.max", "512M\n",
			"want an integer", func(t *testing.T, s Snapshot) { eq(t, "MemoryLimit", s.MemoryLimit, int64(0)) }},
		{"v2 memory.high negative", "v2", "sys/fs/cgroup/system.slice/app.service/memory.high", "-1\n",
			"negative", func(t *testing.T, s Snapshot) { eq(t, "MemoryHigh", s.MemoryHigh, int64(0)) }},
		{"v2 memory.events truncated", "v2", "sys/fs/cgroup/system.slice/app.service/memory.events", "low 0\nhigh 2\noom_k",
			"want \"KEY VALUE\"", func(t *testing.T, s Snapshot) { eq(t, "OOMKills", s.OOMKills, int64(0)) }},
		{"v2 cpuset garbage falls back to parent", "v2", "sys/fs/cgroup/system.slice/app.service/cpuset.cpus.effective", "0-\n",
			"bad CPU number", func(t *testing.T, s Snapshot) { eq(t, "CPUSetCount", s.CPUSetCount(), 8) }},
		{"v2 cpuset reversed range", "v2", "sys/fs/cgroup/system.slice/app.service/cpuset.cpus.effective", "7-2\n",
			"reversed range", func(t *testing.T, s Snapshot) { eq(t, "CPUSetCount", s.CPUSetCount(), 8) }},
		{"status without Cpus_allowed_list", "v2", "proc/self/status", "Name:\tx\n",
			"no Cpus_allowed_list", func(t *testing.T, s Snapshot) { eq(t, "AffinityCPUs", s.AffinityCPUs, 8) }},
		{"online garbage uses affinity", "v2", "sys/devices/system/cpu/online", "all\n",
			"bad CPU number", func(t *testing.T, s Snapshot) { eq(t, "HostCPUs", s.HostCPUs, 8) }},
		{"meminfo garbage", "v1-docker", "proc/meminfo", "MemTotal: lots\n",
			"want \"N kB\"", func(t *testing.T, s Snapshot) {
				eq(t, "HostMemory", s.HostMemory, int64(0))
				// Without host memory only v1's "no limit" value counts as
				// unlimited, so the 8 GiB limit now binds.
				eq(t, "MemoryLimit", s.MemoryLimit, int64(8<<30))
			}},
		{"proc cgroup bad line", "v2", "proc/self/cgroup", "garbage\n0::/system.slice/app.service\n",
			"want ID:CONTROLLERS:/PATH", func(t *testing.T, s Snapshot) { eq(t, "CPUQuota", s.CPUQuota, 1.5) }},
		{"mountinfo truncated line", "v2", "proc/self/mountinfo", "30 22 0:26 / - cgroup2 cgroup2 rw\n",
			"too few fields", func(t *testing.T, s Snapshot) { eq(t, "Version", s.Version, 0) }},
		{"mountinfo without separator", "v2", "proc/self/mountinfo", "30 22 0:26 / /sys/fs/cgroup rw cgroup2\n",
			"no \" - \" separator", func(t *testing.T, s Snapshot) { eq(t, "Version", s.Version, 0) }},
		{"mountinfo missing", "v2", "proc/self/mountinfo", "<delete>",
			"cannot locate cgroup directories", func(t *testing.T, s Snapshot) { eq(t, "Version", s.Version, 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyTree(t, filepath.Join("testdata", tt.fixture))
			p := filepath.Join(root, tt.file)
			switch tt.content {
			case "<delete>":
				must(t, os.Remove(p))
			case "<dir>":
				must(t, os.Remove(p))
				must(t, os.Mkdir(p, 0o755))
			default:
				must(t, os.WriteFile(p, []byte(tt.content), 0o644))
			}
			s, err := Reader{Root: root}.Read()
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if len(s.Warnings) != 1 {
				t.Fatalf("got %d warnings, want 1: %q", len(s.Warnings), s.Warnings)
			}
			if !strings.Contains(s.Warnings[0], tt.warning) || !strings.Contains(s.Warnings[0], p) {
				t.Errorf("warning %q does not contain %q and the file %s", s.Warnings[0], tt.warning, p)
			}
			tt.check(t, s)
		})
	}
}

func noQuota(t *testing.T, s Snapshot) {
	t.Helper()
	eq(t, "CPUQuota", s.CPUQuota, 0.0)
}

func eq[T comparable](t *testing.T, name string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestParseMountinfoEmptySource: lines as Linux 6.18 writes them for
// hierarchies mounted with an empty source (mount(2) with source ""):
// two spaces between the type and the super options. The controllers
// must still be read from the super options (TestRealEmptyMountSource
// does this on a live v1 host).
func TestParseMountinfoEmptySource(t *testing.T) {
	mounts, warnings := parseMountinfo("65 44 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup  rw,cpu,cpuacct\n" +
		"66 44 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2  rw\n")
	if len(warnings) != 0 || len(mounts) != 2 {
		t.Fatalf("got %+v, warnings %q; want 2 mounts", mounts, warnings)
	}
	if got := mounts[0].options; !slices.Equal(got, []string{"rw", "cpu", "cpuacct"}) {
		t.Errorf("v1 super options = %q, want [rw cpu cpuacct]", got)
	}
	if m := mounts[1]; m.fsType != "cgroup2" || m.mountPoint != "/sys/fs/cgroup/unified" {
		t.Errorf("v2 mount = %+v", m)
	}
}

// TestParseMountinfoUnescapedBytes: the kernel escapes only space, tab,
// newline and backslash in mountinfo's paths (Linux 6.18 wrote these
// lines); a carriage return, a form feed or a no-break space stays part
// of the path, and a snapshot's CRLF line end is not part of the options.
func TestParseMountinfoUnescapedBytes(t *testing.T) {
	for _, tt := range []struct{ line, root, mountPoint, opts string }{
		{"65 44 0:29 / /tmp/cpu\u00a0x rw,relatime - cgroup cgroup rw,cpu\n", "/", "/tmp/cpu\u00a0x", "rw cpu"},
		{"66 44 0:29 /job\r1 /tmp/c\rd\fe rw,relatime - cgroup cgroup rw,cpu\n", "/job\r1", "/tmp/c\rd\fe", "rw cpu"},
		{"67 44 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\r\n", "/", "/sys/fs/cgroup/cpu", "rw cpu"},
	} {
		mounts, warnings := parseMountinfo(tt.line)
		if len(warnings) != 0 || len(mounts) != 1 {
			t.Errorf("%q: got %+v, warnings %q; want 1 mount", tt.line, mounts, warnings)
			continue
		}
		m := mounts[0]
		if m.root != tt.root || m.mountPoint != tt.mountPoint || strings.Join(m.options, " ") != tt.opts {
			t.Errorf("%q: root %q, mount point %q, options %q; want %q, %q, %q", tt.line, m.root, m.mountPoint, m.options, tt.root, tt.mountPoint, tt.opts)
		}
	}
}

// TestReadNamespaceAmbiguous: when more than one directory could be the
// process's cgroup below a mount made outside its cgroup namespace, and
// there is no live process to look for, nothing is guessed: the mount
// point is used with a warning, as before.
func TestReadNamespaceAmbiguous(t *testing.T) {
	root := copyTree(t, filepath.Join("testdata", "v2-namespace-host-mount"))
	must(t, os.MkdirAll(filepath.Join(root, "sys/fs/cgroup/kubepods/pod2"), 0o755))
	s, err := Reader{Root: root}.Read()
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "CPUDir", s.CPUDir, filepath.Join(root, "sys/fs/cgroup"))
	eq(t, "CPUQuota", s.CPUQuota, 0.0)
	checkWarnings(t, s.Warnings, []string{"cgroup path / is not below the root /../.. of any mount of its hierarchy"})
}

func TestReadMissingProcCgroup(t *testing.T) {
	root := copyTree(t, filepath.Join("testdata", "v2"))
	must(t, os.Remove(filepath.Join(root, "proc/self/cgroup")))
	s, err := Reader{Root: root}.Read()
	if !errorsIsNotExist(err) {
		t.Fatalf("err = %v, want one wrapping fs.ErrNotExist", err)
	}
	eq(t, "Version", s.Version, 0)
	eq(t, "HostCPUs", s.HostCPUs, 8) // host numbers survive
	checkWarnings(t, s.Warnings, []string{"proc/self/cgroup: unreadable"})
}

func errorsIsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// TestReadNotices checks that a second Read sees a changed limit and a
// process moved to another cgroup: nothing may be cached.
func TestReadNotices(t *testing.T) {
	root := copyTree(t, filepath.Join("testdata", "v2"))
	r := Reader{Root: root}
	s := readOK(t, r)
	eq(t, "CPUQuota", s.CPUQuota, 1.5)

	must(t, os.WriteFile(filepath.Join(root, "sys/fs/cgroup/system.slice/app.service/cpu.max"), []byte("50000 100000\n"), 0o644))
	s = readOK(t, r)
	eq(t, "CPUQuota after limit change", s.CPUQuota, 0.5)

	must(t, os.WriteFile(filepath.Join(root, "proc/self/cgroup"), []byte("0::/system.slice\n"), 0o644))
	s = readOK(t, r)
	eq(t, "CPUCgroup after move", s.CPUCgroup, "/system.slice")
	eq(t, "CPUQuota after move", s.CPUQuota, 0.0)
}

func readOK(t *testing.T, r Reader) Snapshot {
	t.Helper()
	s, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 0 {
		t.Fatalf("warnings: %q", s.Warnings)
	}
	return s
}

func TestReadProcessFixture(t *testing.T) {
	s, err := Reader{Root: "testdata/v2"}.ReadProcess(4242)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "CPUCgroup", s.CPUCgroup, "/system.slice")
	eq(t, "AffinityCPUs", s.AffinityCPUs, 2)
	eq(t, "HostCPUs", s.HostCPUs, 8)

	_, err = Reader{Root: "testdata/v2"}.ReadProcess(4243)
	if !errorsIsNotExist(err) {
		t.Errorf("ReadProcess(absent pid) err = %v, want fs.ErrNotExist", err)
	}
	if _, err := (Reader{}).ReadProcess(0); err == nil {
		t.Error("ReadProcess(0) succeeded, want an error")
	}
}

// TestReadLive reads this machine. It cannot know the right numbers, but
// it can check that what the kernel says for the live process is
// consistent and that ReadProcess of ourselves agrees with Read.
func TestReadLive(t *testing.T) {
	if _, err := os.Stat("/proc/self/cgroup"); err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	s, err := Reader{}.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings on the live system: %q", s.Warnings)
	}
	if s.HostCPUs < 1 || s.AffinityCPUs < 1 || s.AffinityCPUs > s.HostCPUs {
		t.Errorf("HostCPUs %d, AffinityCPUs %d: want 1 <= affinity <= host", s.HostCPUs, s.AffinityCPUs)
	}
	if s.HostMode == "" {
		t.Error("HostMode empty on the live system")
	}
	p, err := Reader{Root: "/"}.ReadProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "ReadProcess CPUDir", p.CPUDir, s.CPUDir)
	eq(t, "ReadProcess MemoryDir", p.MemoryDir, s.MemoryDir)
	if s.CPUDir != "" {
		if _, err := os.Stat(s.CPUDir); err != nil {
			t.Errorf("CPUDir %s: %v", s.CPUDir, err)
		}
	}
}

// TestAncestorsHidden: a container's cgroup namespace shows its cgroup as
// the mount's root, and the limits above it (a pod's) cannot be read. The
// hierarchy's real root has no cgroup.type; a container's root has one.
func TestAncestorsHidden(t *testing.T) {
	for _, tt := range []struct {
		fixture string
		want    bool
	}{
		{"v2-container", true},
		{"v2", false},
		{"v2-nested", false},
		{"v1", false},
	} {
		s, err := Reader{Root: filepath.Join("testdata", tt.fixture)}.Read()
		if err != nil {
			t.Fatal(err)
		}
		if s.AncestorsHidden != tt.want {
			t.Errorf("%s: AncestorsHidden %v, want %v", tt.fixture, s.AncestorsHidden, tt.want)
		}
	}
}
