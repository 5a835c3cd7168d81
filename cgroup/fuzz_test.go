package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-3,8,10-11", "0", "", " 0-1\n", "3-1", "1,,2", "0-65535", "65536", "-1", "1-", "a", "0-3,2-5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil {
			return
		}
		if !slices.IsSorted(cpus) || len(slices.Compact(slices.Clone(cpus))) != len(cpus) {
			t.Fatalf("ParseCPUList(%q) = %v: not sorted and unique", s, cpus)
		}
		if len(cpus) > 0 && (cpus[0] < 0 || cpus[len(cpus)-1] >= maxCPUs) {
			t.Fatalf("ParseCPUList(%q) = %v: out of range", s, cpus)
		}
		// Round trip through the canonical form.
		var parts []string
		for _, c := range cpus {
			parts = append(parts, strconv.Itoa(c))
		}
		again, err := ParseCPUList(strings.Join(parts, ","))
		if err != nil || !slices.Equal(again, cpus) {
			t.Fatalf("round trip of %v: %v, %v", cpus, again, err)
		}
	})
}

func FuzzParseProcCgroup(f *testing.F) {
	for _, s := range []string{
		"12:memory:/ration-test\n4:cpu,cpuacct:/ration-test\n0::/\n",
		"0::/../sibling\n", "garbage", "1:cpu", "x:cpu:/", "1:cpu:relative", "1:name=systemd:/a:b\n", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lines, _ := parseProcCgroup(s)
		for _, l := range lines {
			if !strings.HasPrefix(l.path, "/") || l.id < 0 {
				t.Fatalf("bad line accepted: %+v", l)
			}
		}
	})
}

func FuzzParseMountinfo(f *testing.F) {
	for _, s := range []string{
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n",
		"30 22 0:26 / /sys/fs/cgroup rw shared:4 master:1 - cgroup2 cgroup2 rw,nsdelegate\n",
		`600 500 0:29 /docker/abc /sys/fs/cgroup/cpu\040and\040acct ro - cgroup cgroup rw,cpu,cpuacct`,
		"30 22 0:26 / - cgroup2 cgroup2 rw", "no separator", " - cgroup", "1 2 3 4 5 6 - cgroup",
		"65 44 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup  rw,cpu\n",    // empty source (Linux 6.18)
		"65 44 0:29 / /tmp/cpu\u00a0x rw,relatime - cgroup cgroup rw,cpu\n", // unescaped no-break space
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mounts, _ := parseMountinfo(s)
		for _, m := range mounts {
			if !strings.HasPrefix(m.mountPoint, "/") || !strings.HasPrefix(m.root, "/") {
				t.Fatalf("relative path accepted: %+v", m)
			}
			if m.fsType != "cgroup" && m.fsType != "cgroup2" {
				t.Fatalf("non-cgroup mount returned: %+v", m)
			}
		}
	})
}

// FuzzMountinfoRoundTrip writes a cgroup mount line as the kernel does
// (fs/proc_namespace.c show_mountinfo: fields joined by one space, paths
// and the source mangled with " \t\n\\" only) and parses it back: root,
// mount point and super options must come back whole, whatever bytes the
// paths hold and whether the source is empty.
func FuzzMountinfoRoundTrip(f *testing.F) {
	f.Add("/", "/sys/fs/cgroup/cpu", "cgroup", "cpu,cpuacct", "shared:4")
	f.Add("/docker/abc", "/sys/fs/cgroup/cpu and acct", "", "cpu", "")
	f.Add("/../..", "/mnt/cpu\u00a0x", "none", "memory", "master:1 shared:2")
	f.Add("/job\r1", "/tmp/c\rd\fe\v", "a b", "name=systemd", "")
	f.Fuzz(func(t *testing.T, root, mountPoint, source, opts, optional string) {
		// A trailing "\r" is taken for a CRLF line end (parseMountinfo).
		if !strings.HasPrefix(root, "/") || !strings.HasPrefix(mountPoint, "/") || opts == "" || strings.HasSuffix(opts, "\r") ||
			strings.ContainsAny(opts, " \t\n\\") || strings.ContainsAny(optional, " \t\n\\-") {
			return
		}
		pre := "65 44 0:29 " + escapeOctal(root) + " " + escapeOctal(mountPoint) + " rw,relatime"
		if optional != "" {
			pre += " " + optional
		}
		line := pre + " - cgroup " + escapeOctal(source) + " rw," + opts + "\n"
		mounts, warnings := parseMountinfo(line)
		if len(mounts) != 1 || len(warnings) != 0 {
			t.Fatalf("%q: mounts %+v, warnings %q", line, mounts, warnings)
		}
		m := mounts[0]
		if m.root != root || m.mountPoint != mountPoint || m.fsType != "cgroup" || strings.Join(m.options, ",") != "rw,"+opts {
			t.Fatalf("%q: got %+v", line, m)
		}
	})
}

// escapeOctal is the kernel's mangling (fs/seq_file.c mangle_path with
// " \t\n\\").
func escapeOctal(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\\':
			b.WriteString(`\` + strconv.FormatInt(int64(c)|0o1000, 8)[1:])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func FuzzUnescapeOctal(f *testing.F) {
	for _, s := range []string{"/sys/fs/cgroup/cpu and acct", `back\slash`, "tab\there", "\\", "\\0", `\040`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := unescapeOctal(escapeOctal(s)); got != s {
			t.Fatalf("unescape(escape(%q)) = %q", s, got)
		}
		_ = unescapeOctal(s) // arbitrary input: must not panic
	})
}

func FuzzParseCPUMax(f *testing.F) {
	for _, s := range []string{"max 100000\n", "150000 100000\n", "50000", "max", "0 100000", "1 0", "a b", "1 2 3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, p, err := parseCPUMax(s)
		if err != nil {
			return
		}
		if p <= 0 || (q != -1 && q <= 0) {
			t.Fatalf("parseCPUMax(%q) = %d, %d", s, q, p)
		}
	})
}

func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"-1\n", "100000\n", "9223372036854771712\n", "max\n", "", "1e3", " 5 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := parseInt(s); err == nil {
			if m, err := parseInt(strconv.FormatInt(n, 10)); err != nil || m != n {
				t.Fatalf("parseInt(%q) = %d, does not round trip", s, n)
			}
		}
		if n, unlimited, err := parseMaxOrInt(s); err == nil && !unlimited && n < 0 {
			t.Fatalf("parseMaxOrInt(%q) = %d", s, n)
		}
	})
}

func FuzzParseKeyed(f *testing.F) {
	for _, s := range []string{
		"nr_periods 120\nnr_throttled 30\nthrottled_time 1500000000\n",
		"low 0\nhigh 2\noom_kill 1\n", "oom_kill", "a b c", "k 1\nk 2\n", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { _, _ = parseKeyed(s) })
}

func FuzzParseMeminfo(f *testing.F) {
	for _, s := range []string{"MemTotal:        4194304 kB\n", "MemTotal: 1 MB", "MemTotal: lots", "", "MemTotal: 99999999999999999999 kB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := parseMeminfoTotal(s); err == nil && n <= 0 {
			t.Fatalf("parseMeminfoTotal(%q) = %d", s, n)
		}
		_, _ = parseStatusCPUs(s)
	})
}

// FuzzRead feeds arbitrary /proc/self/cgroup, mountinfo and cpu.max
// contents to a whole Read: it must never panic, and always return
// non-nil warnings.
func FuzzRead(f *testing.F) {
	f.Add("0::/a\n", "30 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "50000 100000\n")
	f.Add("0::/../a\n", "30 22 0:26 /x /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "max 1\n")
	f.Add("1:cpu:/a/../../b\n", "32 31 0:29 / /c rw - cgroup cgroup rw,cpu\n", "x")
	f.Add("1:cpu:/a\n", `32 31 0:29 /a/ /c\040d rw - cgroup cgroup rw,cpu`, "")
	f.Add("1:cpu:/a\n", "32 31 0:29 / /c rw - cgroup  rw,cpu\n", "50000\n")
	f.Fuzz(func(t *testing.T, cg, mi, cpuMax string) {
		root := t.TempDir()
		write := func(name, data string) {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("proc/self/cgroup", cg)
		write("proc/self/mountinfo", mi)
		write("sys/fs/cgroup/a/cpu.max", cpuMax)
		write("c/a/cpu.cfs_quota_us", cpuMax)
		s, _ := Reader{Root: root}.Read()
		if s.Warnings == nil {
			t.Fatal("nil Warnings")
		}
		if s.CPUQuota < 0 {
			t.Fatalf("negative quota %v", s.CPUQuota)
		}
		for _, d := range []string{s.CPUDir, s.MemoryDir} {
			if d != "" && !strings.HasPrefix(d, root) {
				t.Fatalf("directory %s escapes the root %s", d, root)
			}
		}
	})
}
