package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const mib = 1 << 20

func TestReaderMemStatFixtures(t *testing.T) {
	tests := []struct {
		fixture                string
		version                int
		dir, limitDir          string // relative to the fixture
		limit, headroom        int64
		usage, ws, anon, file  int64
		limitWS                int64
		oomKills               int64
		some10, full10         float64
		someTotal              time.Duration
		pressure               bool
		limitCgroup            string
		leafLimitFromReadAlone int64 // ReadMemStat(dir).Limit
	}{
		// A container without a limit of its own in a pod of 200 MiB: the
		// headroom is the pod's (200 - (180 - 40)), not the container's.
		{fixture: "memstat-v2", version: 2,
			dir: "sys/fs/cgroup/kubepods/pod1/ctr", limitDir: "sys/fs/cgroup/kubepods/pod1",
			limit: 200 * mib, headroom: 60 * mib, usage: 150 * mib, ws: 120 * mib, anon: 110 * mib, file: 38 * mib,
			limitWS: 140 * mib, oomKills: 2, pressure: true, some10: 12.5, full10: 8, someTotal: 8123456 * time.Microsecond,
			limitCgroup: "/kubepods/pod1"},
		{fixture: "memstat-v1", version: 1,
			dir: "sys/fs/cgroup/memory/ration-test", limitDir: "sys/fs/cgroup/memory/ration-test",
			limit: 200 * mib, headroom: 50 * mib, usage: 170 * mib, ws: 150 * mib, anon: 140 * mib, file: 30 * mib,
			limitWS: 150 * mib, oomKills: 4, limitCgroup: "/ration-test", leafLimitFromReadAlone: 200 * mib},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			root := filepath.Join("testdata", tt.fixture)
			mr, err := Reader{Root: root}.MemStat()
			if err != nil {
				t.Fatal(err)
			}
			s := mr.Stat
			for _, c := range []struct {
				name      string
				got, want any
			}{
				{"Stat.Version", s.Version, tt.version}, {"Stat.Dir", s.Dir, filepath.Join(root, tt.dir)},
				{"Stat.Limit", s.Limit, tt.limit}, {"Limit", mr.Limit, tt.limit}, {"LimitCgroup", mr.LimitCgroup, tt.limitCgroup},
				{"LimitStat.Dir", mr.LimitStat.Dir, filepath.Join(root, tt.limitDir)}, {"LimitStat.WorkingSet", mr.LimitStat.WorkingSet, tt.limitWS},
				{"Usage", s.Usage, tt.usage}, {"WorkingSet", s.WorkingSet, tt.ws}, {"Anon", s.Anon, tt.anon}, {"File", s.File, tt.file},
				{"OOMKills", s.OOMKills, tt.oomKills}, {"Pressure.Present", s.Pressure.Present, tt.pressure},
				{"Pressure.Some.Avg10", s.Pressure.Some.Avg10, tt.some10}, {"Pressure.Full.Avg10", s.Pressure.Full.Avg10, tt.full10},
				{"Pressure.Some.Total", s.Pressure.Some.Total, tt.someTotal},
			} {
				if c.got != c.want {
					t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
				}
			}
			if h, ok := mr.Headroom(); !ok || h != tt.headroom {
				t.Errorf("Headroom() = %d MiB, %v; want %d MiB", h/mib, ok, tt.headroom/mib)
			}
			if len(s.Warnings) != 0 {
				t.Errorf("warnings: %q", s.Warnings)
			}
			alone, err := ReadMemStat(filepath.Join(root, tt.dir), tt.version)
			if err != nil {
				t.Fatal(err)
			}
			if alone.Limit != tt.leafLimitFromReadAlone {
				t.Errorf("ReadMemStat(leaf).Limit = %d, want its own limit %d", alone.Limit, tt.leafLimitFromReadAlone)
			}
		})
	}
}

func TestReaderMemStatNoLimit(t *testing.T) {
	// The v2 fixture's app.service has a limit; without one (v1-docker's
	// 8 GiB is above the host's memory) Headroom says so.
	root := memFixture(t, "memstat-v2")
	memMust(t, os.WriteFile(filepath.Join(root, "sys/fs/cgroup/kubepods/pod1/memory.max"), []byte("max\n"), 0o644))
	mr, err := Reader{Root: root}.MemStat()
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := mr.Headroom(); ok || mr.Limit != 0 || mr.LimitStat.Dir != "" {
		t.Errorf("no limit: Headroom() = %d, %v; Limit %d; LimitStat.Dir %q", h, ok, mr.Limit, mr.LimitStat.Dir)
	}
	if _, err := (Reader{Root: filepath.Join("testdata", "none")}).MemStat(); err == nil {
		t.Error("MemStat of a fixture without cgroups: no error")
	}
}

func memFixture(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestReadMemStatDamaged damages one file of a good fixture per case.
func TestReadMemStatDamaged(t *testing.T) {
	const v2leaf, v1leaf = "sys/fs/cgroup/kubepods/pod1/ctr", "sys/fs/cgroup/memory/ration-test"
	tests := []struct {
		name, fixture, file, content string // content "-": remove the file
		wantErr                      string // substring of the error; "" for none
		warning                      string // substring of the one warning; "" for none
		check                        func(t *testing.T, m MemStat)
	}{
		{name: "v2 usage missing", fixture: "memstat-v2", file: "memory.current", content: "-", wantErr: "memory.current"},
		{name: "v2 usage garbage", fixture: "memstat-v2", file: "memory.current", content: "lots\n", wantErr: `"lots"`},
		{name: "v2 usage negative", fixture: "memstat-v2", file: "memory.current", content: "-4096\n", wantErr: "memory.current"},
		{name: "v2 usage empty", fixture: "memstat-v2", file: "memory.current", content: "", wantErr: "memory.current"},
		{name: "v1 usage truncated", fixture: "memstat-v1", file: "memory.usage_in_bytes", content: "1782579", check: func(t *testing.T, m MemStat) {
			// A truncated number is still a number: nothing can tell.
			eqMem(t, "Usage", m.Usage, 1782579)
			eqMem(t, "WorkingSet", m.WorkingSet, 0) // below inactive_file: clamped
		}},
		{name: "v2 memory.stat truncated mid-line", fixture: "memstat-v2", file: "memory.stat", content: "anon 115343360\nfile 39845888\ninactive_fi",
			warning: "memory.stat: line 3", check: func(t *testing.T, m MemStat) {
				eqMem(t, "WorkingSet without inactive_file", m.WorkingSet, 150*mib)
				eqMem(t, "Anon", m.Anon, 0)
			}},
		{name: "v2 memory.stat value not a number", fixture: "memstat-v2", file: "memory.stat", content: "anon 1\ninactive_file 1e6\n", warning: "not a non-negative integer"},
		{name: "v2 memory.stat missing", fixture: "memstat-v2", file: "memory.stat", content: "-", check: func(t *testing.T, m MemStat) {
			eqMem(t, "WorkingSet", m.WorkingSet, 150*mib)
		}},
		{name: "v2 inactive_file above usage", fixture: "memstat-v2", file: "memory.stat", content: "anon 0\nfile 200000000\ninactive_file 200000000\n",
			check: func(t *testing.T, m MemStat) { eqMem(t, "WorkingSet", m.WorkingSet, 0) }},
		{name: "v2 events without oom_kill", fixture: "memstat-v2", file: "memory.events", content: "low 0\nhigh 0\nmax 0\noom 0\n",
			check: func(t *testing.T, m MemStat) { eqMem(t, "OOMKills", m.OOMKills, -1) }},
		{name: "v2 events garbage", fixture: "memstat-v2", file: "memory.events", content: "oom_kill many\n", warning: "memory.events",
			check: func(t *testing.T, m MemStat) { eqMem(t, "OOMKills", m.OOMKills, -1) }},
		{name: "v1 oom_control before 4.13", fixture: "memstat-v1", file: "memory.oom_control", content: "oom_kill_disable 0\nunder_oom 0\n",
			check: func(t *testing.T, m MemStat) { eqMem(t, "OOMKills", m.OOMKills, -1) }},
		{name: "v2 no PSI", fixture: "memstat-v2", file: "memory.pressure", content: "-", check: func(t *testing.T, m MemStat) {
			if m.Pressure.Present {
				t.Error("Pressure.Present without memory.pressure")
			}
		}},
		{name: "v2 pressure garbage", fixture: "memstat-v2", file: "memory.pressure", content: "some avg10=high\n", warning: "memory.pressure",
			check: func(t *testing.T, m MemStat) {
				if m.Pressure.Present {
					t.Error("Pressure.Present from a malformed file")
				}
			}},
		{name: "v2 limit garbage", fixture: "memstat-v2", file: "memory.max", content: "unlimited\n", warning: "memory.max",
			check: func(t *testing.T, m MemStat) { eqMem(t, "Limit", m.Limit, 0) }},
		{name: "v1 no limit", fixture: "memstat-v1", file: "memory.limit_in_bytes", content: "9223372036854771712\n",
			check: func(t *testing.T, m MemStat) { eqMem(t, "Limit", m.Limit, 0) }},
		{name: "v2 limit set", fixture: "memstat-v2", file: "memory.max", content: "104857600\n",
			check: func(t *testing.T, m MemStat) { eqMem(t, "Limit", m.Limit, 100*mib) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := memFixture(t, tt.fixture)
			leaf, version := v2leaf, 2
			if tt.fixture == "memstat-v1" {
				leaf, version = v1leaf, 1
			}
			dir := filepath.Join(root, leaf)
			f := filepath.Join(dir, tt.file)
			if tt.content == "-" {
				memMust(t, os.Remove(f))
			} else {
				memMust(t, os.WriteFile(f, []byte(tt.content), 0o644))
			}
			m, err := ReadMemStat(dir, version)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), f) {
					t.Fatalf("err = %v, want one naming %s and containing %q", err, f, tt.wantErr)
				}
				if tt.content == "-" && !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("err = %v, want fs.ErrNotExist", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Warnings == nil {
				t.Error("nil Warnings")
			}
			switch {
			case tt.warning == "" && len(m.Warnings) != 0:
				t.Errorf("warnings %q, want none", m.Warnings)
			case tt.warning != "" && (len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], tt.warning) || !strings.Contains(m.Warnings[0], f)):
				t.Errorf("warnings %q, want one naming %s and containing %q", m.Warnings, f, tt.warning)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
}

func TestReadMemStatBadVersion(t *testing.T) {
	if _, err := ReadMemStat("testdata/memstat-v1/sys/fs/cgroup/memory/ration-test", 3); err == nil {
		t.Error("version 3: no error")
	}
	if _, err := ReadMemStat("testdata/memstat-v1/nowhere", 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v, want fs.ErrNotExist", err)
	}
}

func memMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func eqMem[T comparable](t *testing.T, name string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

func TestParsePressure(t *testing.T) {
	tests := []struct {
		name, in string
		want     Pressure // compared when wantErr == ""
		wantErr  string
	}{
		{name: "memory.pressure (6.x)",
			in: "some avg10=14.20 avg60=5.31 avg300=1.20 total=9051234\nfull avg10=9.85 avg60=3.02 avg300=0.70 total=5102399\n",
			want: Pressure{Present: true,
				Some: PressureLine{Avg10: 14.2, Avg60: 5.31, Avg300: 1.2, Total: 9051234 * time.Microsecond},
				Full: PressureLine{Avg10: 9.85, Avg60: 3.02, Avg300: 0.7, Total: 5102399 * time.Microsecond}}},
		{name: "idle", in: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
			want: Pressure{Present: true}},
		{name: "some only (old cpu.pressure)", in: "some avg10=1.00 avg60=0.50 avg300=0.10 total=42\n",
			want: Pressure{Present: true, Some: PressureLine{Avg10: 1, Avg60: 0.5, Avg300: 0.1, Total: 42 * time.Microsecond}}},
		{name: "full saturated", in: "some avg10=100.00 avg60=100.00 avg300=99.99 total=1\nfull avg10=100.00 avg60=100.00 avg300=99.99 total=1\n",
			want: Pressure{Present: true, Some: PressureLine{100, 100, 99.99, time.Microsecond}, Full: PressureLine{100, 100, 99.99, time.Microsecond}}},
		{name: "a future field is ignored", in: "some avg10=1.00 avg60=1.00 avg300=1.00 avg3600=1.00 total=5\n",
			want: Pressure{Present: true, Some: PressureLine{1, 1, 1, 5 * time.Microsecond}}},
		{name: "empty", in: "", wantErr: `no "some" line`},
		{name: "full only", in: "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", wantErr: `no "some" line`},
		{name: "truncated line", in: "some avg10=0.00 avg60=0.00 avg3", wantErr: "KEY=VALUE"},
		{name: "missing total", in: "some avg10=0.00 avg60=0.00 avg300=0.00\n", wantErr: "want avg10"},
		{name: "average over 100", in: "some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n", wantErr: "percentage"},
		{name: "NaN", in: "some avg10=NaN avg60=0.00 avg300=0.00 total=0\n", wantErr: "percentage"},
		{name: "negative total", in: "some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n", wantErr: "total"},
		{name: "total overflows a Duration", in: "some avg10=0.00 avg60=0.00 avg300=0.00 total=9223372036854775807\n", wantErr: "total"},
		{name: "unknown line", in: "most avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", wantErr: `want "some" or "full"`},
		{name: "repeated line", in: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nsome avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", wantErr: "repeated"},
		{name: "field without =", in: "some avg10 0.00 avg60=0.00 avg300=0.00 total=0\n", wantErr: "KEY=VALUE"},
		{name: "repeated field", in: "some avg10=0.00 avg10=0.00 avg300=0.00 total=0\n", wantErr: "want avg10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePressure(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, errMalformed) {
					t.Fatalf("parsePressure(%q) = %+v, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parsePressure(%q) =\n  %+v, %v\nwant\n  %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseMemoryStat(t *testing.T) {
	for _, tt := range []struct {
		in      string
		key     string
		want    int64
		wantErr bool
	}{
		{in: "anon 1\nfile 2\n", key: "file", want: 2},
		{in: "oom_kill_disable 0\nunder_oom 0\noom_kill 4\n", key: "oom_kill", want: 4},
		{in: "\n\nanon 7\n\n", key: "anon", want: 7},
		{in: "anon 1\nanon 3\n", key: "anon", want: 3}, // last wins
		{in: "anon -1\n", wantErr: true},
		{in: "anon 1 2\n", wantErr: true},
		{in: "anon\n", wantErr: true},
		{in: "anon 99999999999999999999\n", wantErr: true},
	} {
		m, err := parseMemoryStat(tt.in)
		if (err != nil) != tt.wantErr || (err == nil && m[tt.key] != tt.want) {
			t.Errorf("parseMemoryStat(%q) = %v, %v; want %s=%d, error %v", tt.in, m, err, tt.key, tt.want, tt.wantErr)
		}
	}
}

func FuzzParsePressure(f *testing.F) {
	for _, s := range []string{
		"some avg10=14.20 avg60=5.31 avg300=1.20 total=9051234\nfull avg10=9.85 avg60=3.02 avg300=0.70 total=5102399\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", "some", "full a=b", "some avg10=1e2 avg60=0 avg300=0 total=0", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePressure(s)
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("error %v does not wrap errMalformed", err)
			}
			return
		}
		for _, l := range []PressureLine{p.Some, p.Full} {
			for _, a := range []float64{l.Avg10, l.Avg60, l.Avg300} {
				if !(a >= 0 && a <= 100) {
					t.Fatalf("parsePressure(%q): average %v out of range", s, a)
				}
			}
			if l.Total < 0 {
				t.Fatalf("parsePressure(%q): negative total", s)
			}
		}
	})
}

// FuzzReadMemStat writes arbitrary contents into the files of one v2
// directory: ReadMemStat must never panic, and what it returns must be sane.
func FuzzReadMemStat(f *testing.F) {
	f.Add("157286400\n", "anon 1\ninactive_file 31457280\n", "oom_kill 2\n", "some avg10=1.00 avg60=0.00 avg300=0.00 total=1\n", "max\n")
	f.Add("x", "inactive_file 99999999999\n", "oom_kill -1", "full", "-1")
	f.Fuzz(func(t *testing.T, current, stat, events, pressure, limit string) {
		dir := t.TempDir()
		for name, data := range map[string]string{"memory.current": current, "memory.stat": stat, "memory.events": events, "memory.pressure": pressure, "memory.max": limit} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m, err := ReadMemStat(dir, 2)
		if err != nil {
			return
		}
		if m.Usage < 0 || m.WorkingSet < 0 || m.WorkingSet > m.Usage || m.Limit < 0 || m.OOMKills < -1 || m.Warnings == nil {
			t.Fatalf("insane reading %+v", m)
		}
	})
}
