package cgroup

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// errMalformed is wrapped by every parser error so callers can tell a bad
// file from an unreadable one.
var errMalformed = errors.New("malformed")

// maxCPUs bounds ParseCPUList so a hostile or corrupt list ("0-4294967295")
// cannot make it allocate gigabytes. Linux's NR_CPUS tops out at 8192.
const maxCPUs = 1 << 16

// ParseCPUList parses the kernel's CPU list syntax, as used by
// cpuset.cpus, cpuset.cpus.effective, /sys/devices/system/cpu/online and
// the Cpus_allowed_list line of /proc/PID/status: comma-separated CPU
// numbers and inclusive ranges, e.g. "0-3,8,10-11". Surrounding white space
// and a trailing newline are ignored. The result is sorted and without
// duplicates. An empty (or all white space) string gives an empty, non-nil
// slice and no error: the kernel writes an empty cpuset.cpus for a v1
// cgroup that was never configured. CPU numbers must be below 65536;
// reversed ranges ("3-1"), signs and stray characters are errors.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	cpus := []int{}
	if s == "" {
		return cpus, nil
	}
	var seen [maxCPUs / 64]uint64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPUNumber(lo)
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = parseCPUNumber(hi); err != nil {
				return nil, fmt.Errorf("cpu list %q: %w", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("cpu list %q: reversed range %q: %w", s, part, errMalformed)
			}
		}
		for c := a; c <= b; c++ {
			seen[c/64] |= 1 << (c % 64)
		}
	}
	for w, bits := range seen {
		for bits != 0 {
			i := 0
			for bits&(1<<i) == 0 {
				i++
			}
			cpus = append(cpus, w*64+i)
			bits &^= 1 << i
		}
	}
	return cpus, nil
}

func parseCPUNumber(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("bad CPU number %q: %w", s, errMalformed)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n >= maxCPUs {
		return 0, fmt.Errorf("CPU number %q out of range: %w", s, errMalformed)
	}
	return n, nil
}

// procCgroup is one line of /proc/PID/cgroup.
type procCgroup struct {
	id          int
	controllers []string // empty for the v2 line "0::/path"
	path        string   // as written by the kernel, not cleaned: "/.." matters
}

// parseProcCgroup parses /proc/PID/cgroup. Lines that do not have the
// three colon-separated fields are skipped with a warning each, so one
// damaged line does not hide the controllers the others describe.
func parseProcCgroup(data string) (lines []procCgroup, warnings []string) {
	for i, l := range strings.Split(data, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		idStr, rest, ok1 := strings.Cut(l, ":")
		ctrl, path, ok2 := strings.Cut(rest, ":")
		id, err := strconv.Atoi(idStr)
		if !ok1 || !ok2 || err != nil || id < 0 || !strings.HasPrefix(path, "/") {
			warnings = append(warnings, fmt.Sprintf("line %d %q: want ID:CONTROLLERS:/PATH", i+1, truncate(l)))
			continue
		}
		pc := procCgroup{id: id, path: path}
		if ctrl != "" {
			pc.controllers = strings.Split(ctrl, ",")
		}
		lines = append(lines, pc)
	}
	return lines, warnings
}

// mount is one cgroup or cgroup2 line of /proc/PID/mountinfo.
type mount struct {
	root       string   // the cgroup path mounted here, unescaped
	mountPoint string   // unescaped
	fsType     string   // "cgroup" or "cgroup2"
	options    []string // super options: for v1 they name the controllers
}

// parseMountinfo returns the cgroup and cgroup2 mounts of a mountinfo file
// (proc(5)). Lines of other file systems are skipped without looking at
// them closely; a cgroup line that is too short, or a line without the
// " - " separator, is skipped with a warning.
//
// Fields are cut at single spaces, as the kernel writes them, not at runs
// of white space: the mount source may be empty (a hierarchy mounted with
// source "" reads "- cgroup  rw,cpu"), and paths keep every byte but
// space, tab, newline and backslash unescaped, so a mount point may hold
// a carriage return or a no-break space. A trailing "\r" (a snapshot
// that went through Windows) is dropped.
func parseMountinfo(data string) (mounts []mount, warnings []string) {
	for i, l := range strings.Split(data, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		pre, post, ok := strings.Cut(l, " - ")
		if !ok {
			warnings = append(warnings, fmt.Sprintf("line %d %q: no \" - \" separator", i+1, truncate(l)))
			continue
		}
		pf := strings.Split(pre, " ")
		fsType, rest, hasSource := strings.Cut(post, " ")
		if fsType != "cgroup" && fsType != "cgroup2" {
			continue
		}
		if len(pf) < 6 || !hasSource {
			warnings = append(warnings, fmt.Sprintf("line %d %q: too few fields", i+1, truncate(l)))
			continue
		}
		m := mount{root: unescapeOctal(pf[3]), mountPoint: unescapeOctal(pf[4]), fsType: fsType}
		if _, opts, ok := strings.Cut(rest, " "); ok && opts != "" {
			m.options = strings.Split(opts, ",")
		}
		if !strings.HasPrefix(m.mountPoint, "/") || !strings.HasPrefix(m.root, "/") {
			warnings = append(warnings, fmt.Sprintf("line %d %q: root and mount point must be absolute", i+1, truncate(l)))
			continue
		}
		mounts = append(mounts, m)
	}
	return mounts, warnings
}

// unescapeOctal undoes the kernel's mangling of mount paths: space, tab,
// newline and backslash appear as \040, \011, \012 and \134. A backslash
// not followed by three octal digits is kept as is, as the kernel never
// writes one.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			v := (s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0')
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// parseInt parses a file holding one decimal integer and a newline, as the
// v1 files and memory.current do.
func parseInt(data string) (int64, error) {
	s := strings.TrimSpace(data)
	if s == "" {
		return 0, fmt.Errorf("empty: %w", errMalformed)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want an integer, got %q: %w", truncate(s), errMalformed)
	}
	return n, nil
}

// parseMaxOrInt parses a v2 file holding "max" or one non-negative
// integer (memory.max, memory.high). unlimited is true for "max".
func parseMaxOrInt(data string) (n int64, unlimited bool, err error) {
	s := strings.TrimSpace(data)
	if s == "max" {
		return 0, true, nil
	}
	n, err = parseInt(s)
	if err == nil && n < 0 {
		return 0, false, fmt.Errorf("negative value %d: %w", n, errMalformed)
	}
	return n, false, err
}

// parseCPUMax parses v2 cpu.max, "$MAX $PERIOD" where $MAX is "max" or a
// quota in microseconds. quota is -1 for "max". A file with only the
// first field is truncated (the kernel always writes both) and an error.
func parseCPUMax(data string) (quota, period int64, err error) {
	f := strings.Fields(data)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("want \"QUOTA PERIOD\" or \"max PERIOD\", got %q: %w", truncate(strings.TrimSpace(data)), errMalformed)
	}
	period, err = strconv.ParseInt(f[1], 10, 64)
	if err != nil || period <= 0 {
		return 0, 0, fmt.Errorf("bad period %q: %w", truncate(f[1]), errMalformed)
	}
	if f[0] == "max" {
		return -1, period, nil
	}
	quota, err = strconv.ParseInt(f[0], 10, 64)
	if err != nil || quota <= 0 {
		return 0, 0, fmt.Errorf("bad quota %q: %w", truncate(f[0]), errMalformed)
	}
	return quota, period, nil
}

// parseKeyed parses a flat keyed file such as cpu.stat, memory.events,
// memory.oom_control or memory.stat: lines of "key value". Lines that are
// not "word integer" are errors; a repeated key keeps its last value.
func parseKeyed(data string) (map[string]int64, error) {
	m := map[string]int64{}
	for _, l := range strings.Split(data, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %q: want \"KEY VALUE\": %w", truncate(l), errMalformed)
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %q: value is not an integer: %w", truncate(l), errMalformed)
		}
		m[f[0]] = v
	}
	return m, nil
}

// parseMeminfoTotal returns MemTotal of /proc/meminfo in bytes.
func parseMeminfoTotal(data string) (int64, error) {
	for _, l := range strings.Split(data, "\n") {
		rest, ok := strings.CutPrefix(l, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("MemTotal line %q: want \"N kB\": %w", truncate(l), errMalformed)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 || kb > math.MaxInt64/1024 {
			return 0, fmt.Errorf("MemTotal %q: %w", truncate(f[0]), errMalformed)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no MemTotal line: %w", errMalformed)
}

// parseStatusCPUs returns the Cpus_allowed_list of /proc/PID/status.
func parseStatusCPUs(data string) ([]int, error) {
	for _, l := range strings.Split(data, "\n") {
		if rest, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return ParseCPUList(rest)
		}
	}
	return nil, fmt.Errorf("no Cpus_allowed_list line: %w", errMalformed)
}

// truncate keeps warnings readable when a file holds garbage.
func truncate(s string) string {
	const n = 60
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
