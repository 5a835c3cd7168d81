package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MemStat is one reading of one memory cgroup directory: what a job
// runner needs to decide whether another job fits, polled cheaply (a few
// small files, no mountinfo). Byte counts are bytes.
//
// The working set is the kernel's own notion of memory in use, as kubelet
// and cAdvisor compute it (and evict by): usage minus inactive_file, the
// page cache the kernel reclaims first, clamped at 0. Page cache a job
// merely read through is therefore not counted against the limit.
type MemStat struct {
	// Version is the cgroup version of Dir: 1 or 2.
	Version int
	// Dir is the directory read.
	Dir string
	// Limit is Dir's own hard limit (v2 memory.max, v1
	// memory.limit_in_bytes), 0 when none. A value of 2^62 or more (v1
	// writes 9223372036854771712 for "no limit") counts as none.
	// [Reader.MemStat] replaces it by the tightest limit of the walk.
	Limit int64
	// Usage is memory.current (v2) or memory.usage_in_bytes (v1).
	Usage int64
	// InactiveFile is inactive_file (v2) or total_inactive_file (v1) of
	// memory.stat; WorkingSet is max(Usage-InactiveFile, 0).
	InactiveFile int64
	WorkingSet   int64
	// Anon and File split the charged memory: v2 "anon" and "file" of
	// memory.stat; v1 "total_rss" (anonymous and swap cache, without
	// shmem) and "total_cache" (page cache, with shmem).
	Anon int64
	File int64
	// OOMKills is the "oom_kill" counter of memory.events (v2) or
	// memory.oom_control (v1): processes of the cgroup the OOM killer
	// killed. -1 when the kernel does not count them (v1 before Linux
	// 4.13) or the file is missing.
	OOMKills int64
	// Pressure is memory.pressure (v2 with PSI). Pressure.Present is false
	// on v1, or when the kernel was built or booted without PSI.
	Pressure Pressure
	// Warnings names every optional file that was malformed or unreadable
	// (memory.stat, the OOM counter, memory.pressure, the limit); the
	// fields it would have given keep their zero value (OOMKills -1).
	// Never nil.
	Warnings []string
}

// Pressure is a memory.pressure reading: the share of wall time in which
// some (Some) or all (Full) non-idle tasks of the cgroup were stalled
// waiting for memory (reclaim, refaults, swap-in).
type Pressure struct {
	Present bool
	Some    PressureLine
	Full    PressureLine
}

// PressureLine is one line of a PSI file. Avg10, Avg60 and Avg300 are
// percentages (0 to 100) averaged over 10, 60 and 300 seconds; Total is
// the accumulated stall time.
type PressureLine struct {
	Avg10, Avg60, Avg300 float64
	Total                time.Duration
}

// memNoLimit is the smallest value v1 writes for "no limit" on any page
// size; the same bound Snapshot uses when the host's memory is unknown.
const memNoLimit = 1 << 62

// ReadMemStat reads the memory cgroup directory dir of the given version
// (Snapshot.MemoryDir and Snapshot.MemoryVersion). The usage file is
// required: when it is missing or malformed ReadMemStat returns an error
// naming it (wrapping fs.ErrNotExist when the directory is gone). The
// other files are optional and a problem with one becomes a warning.
func ReadMemStat(dir string, version int) (MemStat, error) {
	m := MemStat{Version: version, Dir: dir, OOMKills: -1, Warnings: []string{}}
	if version != 1 && version != 2 {
		return m, fmt.Errorf("cgroup: memory cgroup version %d: want 1 or 2", version)
	}
	n := memFileNamesV1
	if version == 2 {
		n = memFileNamesV2
	}
	f := memFiles{dir: dir, m: &m}

	d, ok, err := f.read(n.usage)
	if err == nil && !ok {
		err = fs.ErrNotExist
	}
	if err == nil {
		m.Usage, err = parseMemCount(d)
	}
	if err != nil {
		return m, fmt.Errorf("cgroup: %s: %w", filepath.Join(dir, n.usage), unwrapMemPathError(err))
	}
	f.optional(n.limit, func(d string) error {
		v, unlimited, err := ParseMemLimit(d)
		if err == nil && !unlimited {
			m.Limit = v
		}
		return err
	})
	f.optional("memory.stat", func(d string) error {
		st, err := parseMemoryStat(d)
		m.InactiveFile, m.Anon, m.File = st[n.inactive], st[n.anon], st[n.file]
		return err
	})
	m.WorkingSet = max(m.Usage-m.InactiveFile, 0)
	f.optional(n.events, func(d string) error {
		st, err := parseMemoryStat(d)
		if v, ok := st["oom_kill"]; ok && err == nil {
			m.OOMKills = v
		}
		return err
	})
	if version == 2 {
		// "Operation not supported" when PSI is compiled in but disabled
		// (psi=0): the same as no PSI, and no warning.
		f.unsupportedIsMissing = true
		f.optional("memory.pressure", func(d string) error {
			p, err := parsePressure(d)
			if err == nil {
				m.Pressure = p
			}
			return err
		})
	}
	return m, nil
}

// memFileNames names a cgroup version's memory files and memory.stat keys.
type memFileNames struct {
	usage, limit, events string
	inactive, anon, file string // keys of memory.stat
}

var (
	memFileNamesV1 = memFileNames{usage: "memory.usage_in_bytes", limit: "memory.limit_in_bytes", events: "memory.oom_control",
		inactive: "total_inactive_file", anon: "total_rss", file: "total_cache"}
	memFileNamesV2 = memFileNames{usage: "memory.current", limit: "memory.max", events: "memory.events",
		inactive: "inactive_file", anon: "anon", file: "file"}
)

// memFiles reads the files of one memory cgroup directory into m.
type memFiles struct {
	dir string
	m   *MemStat
	// unsupportedIsMissing makes a read failing with "operation not
	// supported" count as a missing file.
	unsupportedIsMissing bool
}

// read returns the content of the file name; ok is false when it does
// not exist.
func (f memFiles) read(name string) (data string, ok bool, err error) {
	b, err := readFile(filepath.Join(f.dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist), f.unsupportedIsMissing && errors.Is(err, errors.ErrUnsupported):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return string(b), true, nil
}

// optional reads the optional file name and passes its content to parse;
// a read or parse error becomes a warning. A missing file is skipped.
func (f memFiles) optional(name string, parse func(string) error) {
	d, ok, err := f.read(name)
	if err == nil && ok {
		err = parse(d)
	}
	if err != nil {
		f.m.Warnings = append(f.m.Warnings, fmt.Sprintf("%s: %v", filepath.Join(f.dir, name), unwrapMemPathError(err)))
	}
}

// MemoryReading is a [MemStat] of the process's memory cgroup together
// with the tightest limit over the walk up to the mount root and the
// reading of the cgroup that sets it.
type MemoryReading struct {
	// Stat is the process's own memory cgroup: where a runner's jobs run,
	// so its OOM counter and pressure are theirs. Stat.Limit is the
	// tightest limit (Limit below).
	Stat MemStat
	// Limit is Snapshot.MemoryLimit: the tightest hard limit, 0 when none;
	// LimitCgroup the cgroup path that sets it.
	Limit       int64
	LimitCgroup string
	// LimitStat is the reading of the cgroup that sets Limit: Stat itself
	// when the process's own cgroup does, an ancestor's (a pod around a
	// container) otherwise, whose usage includes its other children. Its
	// Dir is "" when there is no limit.
	LimitStat MemStat
}

// Headroom is how much more memory the cgroup that sets the limit can
// charge before its limit: Limit minus that cgroup's working set, which
// may be negative (page cache is being reclaimed). ok is false when there
// is no limit.
func (m MemoryReading) Headroom() (bytes int64, ok bool) {
	if m.Limit <= 0 {
		return 0, false
	}
	return m.Limit - m.LimitStat.WorkingSet, true
}

// MemStat locates the calling process's memory cgroup as [Reader.Read]
// does and reads it with [ReadMemStat], and the cgroup that sets the
// tightest limit when that is an ancestor. It fails when no memory cgroup
// is found or its usage cannot be read. The Snapshot's warnings are not
// repeated; the ancestor's are added to Stat.Warnings.
func (r Reader) MemStat() (MemoryReading, error) {
	s, err := r.Read()
	if err != nil {
		return MemoryReading{}, err
	}
	if s.MemoryDir == "" || s.MemoryVersion == 0 {
		return MemoryReading{}, errors.New("cgroup: no memory cgroup found")
	}
	st, err := ReadMemStat(s.MemoryDir, s.MemoryVersion)
	if err != nil {
		return MemoryReading{}, err
	}
	mr := MemoryReading{Stat: st, Limit: s.MemoryLimit, LimitCgroup: s.MemoryLimitCgroup}
	mr.Stat.Limit = s.MemoryLimit
	if s.MemoryLimit > 0 {
		mr.LimitStat = mr.Stat
		if d := filepath.Dir(s.MemoryLimitFile); s.MemoryLimitFile != "" && d != s.MemoryDir {
			ls, err := ReadMemStat(d, s.MemoryVersion)
			if err != nil {
				// Without the ancestor's usage the leaf's is a lower
				// bound: headroom is overestimated, so say so.
				mr.Stat.Warnings = append(mr.Stat.Warnings, fmt.Sprintf("%v; headroom taken from %s instead", err, s.MemoryDir))
			} else {
				ls.Limit = s.MemoryLimit
				mr.LimitStat = ls
				mr.Stat.Warnings = append(mr.Stat.Warnings, ls.Warnings...)
			}
		}
	}
	return mr, nil
}

func unwrapMemPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parseMemCount parses a file holding one non-negative byte count.
func parseMemCount(data string) (int64, error) {
	s := strings.TrimSpace(data)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a byte count, got %q: %w", truncate(s), errMalformed)
	}
	return n, nil
}

// ParseMemLimit parses memory.max ("max" or a count) or
// memory.limit_in_bytes (a count, 2^62 or more meaning none).
func ParseMemLimit(data string) (n int64, unlimited bool, err error) {
	if strings.TrimSpace(data) == "max" {
		return 0, true, nil
	}
	n, err = parseMemCount(data)
	if err != nil {
		return 0, false, err
	}
	return n, n >= memNoLimit, nil
}

// parseMemoryStat parses memory.stat, memory.events and
// memory.oom_control: lines of "key value" with a non-negative integer
// value. Any other line makes the whole file an error, since a reading
// half of which is missing would look like "no page cache".
func parseMemoryStat(data string) (map[string]int64, error) {
	m := map[string]int64{}
	for i, l := range strings.Split(data, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d %q: want \"KEY VALUE\": %w", i+1, truncate(l), errMalformed)
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("line %d %q: value is not a non-negative integer: %w", i+1, truncate(l), errMalformed)
		}
		m[f[0]] = v
	}
	return m, nil
}

// parsePressure parses a PSI file (memory.pressure, /proc/pressure/memory):
//
//	some avg10=0.12 avg60=0.05 avg300=0.00 total=636659
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=88408
//
// total is in microseconds. Both lines are required except that a file
// with only the "some" line (the kernel's cpu.pressure before 5.13) gives
// a zero Full. Unknown "key=value" fields are ignored, so a future field
// does not break the reading; averages outside 0 to 100, negative totals,
// unknown line names and repeated lines are errors.
func parsePressure(data string) (Pressure, error) {
	var p Pressure
	seen := map[string]bool{}
	for i, l := range strings.Split(data, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.Fields(l)
		var dst *PressureLine
		switch f[0] {
		case "some":
			dst = &p.Some
		case "full":
			dst = &p.Full
		default:
			return Pressure{}, fmt.Errorf("line %d %q: want \"some\" or \"full\": %w", i+1, truncate(l), errMalformed)
		}
		if seen[f[0]] {
			return Pressure{}, fmt.Errorf("line %d %q: repeated: %w", i+1, truncate(l), errMalformed)
		}
		seen[f[0]] = true
		have := 0 // a bit per field, so a repeated field cannot stand in for a missing one
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return Pressure{}, fmt.Errorf("line %d %q: field %q is not KEY=VALUE: %w", i+1, truncate(l), truncate(kv), errMalformed)
			}
			var avg *float64
			bit := 0
			switch k {
			case "avg10":
				avg, bit = &dst.Avg10, 1
			case "avg60":
				avg, bit = &dst.Avg60, 2
			case "avg300":
				avg, bit = &dst.Avg300, 4
			case "total":
				us, err := strconv.ParseInt(v, 10, 64)
				if err != nil || us < 0 || us > int64(1<<63-1)/int64(time.Microsecond) {
					return Pressure{}, fmt.Errorf("line %d: total %q: %w", i+1, truncate(v), errMalformed)
				}
				dst.Total = time.Duration(us) * time.Microsecond
				have |= 8
				continue
			default:
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x >= 0 && x <= 100) {
				return Pressure{}, fmt.Errorf("line %d: %s %q: want a percentage: %w", i+1, k, truncate(v), errMalformed)
			}
			*avg = x
			have |= bit
		}
		if have != 15 {
			return Pressure{}, fmt.Errorf("line %d %q: want avg10, avg60, avg300 and total: %w", i+1, truncate(l), errMalformed)
		}
	}
	if !seen["some"] {
		return Pressure{}, fmt.Errorf("no \"some\" line: %w", errMalformed)
	}
	p.Present = true
	return p, nil
}
