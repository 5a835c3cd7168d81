package limits

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ration-run/ration/cgroup"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{"100MiB", 100 << 20, ""},
		{"1GiB", 1 << 30, ""},
		{"512M", 512 << 20, ""},
		{"512m", 512 << 20, ""},
		{"1.5G", 3 << 29, ""},
		{"64k", 64 << 10, ""},
		{"2T", 2 << 40, ""},
		{"1KB", 1000, ""},
		{"1MB", 1e6, ""},
		{"1 GB", 1e9, ""},
		{"4096", 4096, ""},
		{"4096B", 4096, ""},
		{"0", 0, ""},
		{" 7 ", 7, ""},
		{"0.5K", 512, ""},
		{"1.0001K", 1024, ""},
		{"4096.0", 4096, ""},
		{"1.5", 0, "a fraction of a byte"},
		{"1.0001", 0, "a fraction of a byte"},
		{"0.5B", 0, "a fraction of a byte"},
		{"", 0, "want a number"},
		{"MiB", 0, "want a number"},
		{"-1M", 0, "want a number"},
		{"1.2.3M", 0, "bad number"},
		{"12X", 0, "unknown unit"},
		{"12 MiBs", 0, "unknown unit"},
		{"9E", 0, "unknown unit"},
		{"8388608T", 0, "too large"},
		{"9223372036854775807", 0, "too large"},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("invalid size %q: ", tt.in)) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSize(%q) err = %v, want one naming the size and containing %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 512: "512 B", 1024: "1 KiB", 256 << 20: "256 MiB", 3 << 29: "1.5 GiB", math.MaxInt64: "8 EiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"100MiB", "1GiB", "512M", "1.5G", "4096", "", "-1", "1e9", "NaN", "Inf", "99999999999999999999T", "0.0000001K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("invalid size %q: ", s)) {
				t.Fatalf("ParseSize(%q) error %q does not name the size", s, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		_ = FormatSize(n)
	})
}

func FuzzParseJobs(f *testing.F) {
	for _, s := range []string{"4", "50%", "0", "-1", "1.5%", "%", "abc", "1e2%", "+3", " 8 ", "100000000000000000000", "+9223372036854775807", "-9223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseJobs(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("%q is not ", s)) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("parseJobs(%q): %q does not name the value on one line", s, err)
			}
			if CheckJobs(s) == nil {
				t.Fatalf("CheckJobs(%q) accepts what parseJobs rejects", s)
			}
			return
		}
		if CheckJobs(s) != nil {
			t.Fatalf("CheckJobs(%q) rejects what parseJobs accepts", s)
		}
		if s != "" && r.n < 1 && !(r.percent > 0) && !r.relative {
			t.Fatalf("parseJobs(%q) = %+v: neither a count, a percentage nor +N/-N", s, r)
		}
		// Whatever was accepted must give at least one job.
		d, err := DecideFrom(host(2), s, 0)
		if err != nil || d.Jobs < 1 {
			t.Fatalf("DecideFrom(-j %q) = %d, %v", s, d.Jobs, err)
		}
	})
}

func FuzzFormatCPUList(f *testing.F) {
	f.Add("0-3,8,10-11")
	f.Add("")
	f.Add("5,1,3-4")
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := cgroup.ParseCPUList(s)
		if err != nil {
			return
		}
		again, err := cgroup.ParseCPUList(formatCPUList(cpus))
		if err != nil || !slices.Equal(again, cpus) {
			t.Fatalf("formatCPUList(%v) = %q does not parse back: %v %v", cpus, formatCPUList(cpus), again, err)
		}
	})
}
