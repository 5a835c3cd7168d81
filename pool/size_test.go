package pool_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/pool"
)

// TestNewDefaultSizeBadEnv: an invalid RATION_JOBS is not read as "no
// limits" (GOMAXPROCS): New(0) takes the documented default, 2 x
// GOMAXPROCS at most 8, and warns once through log/slog.
func TestNewDefaultSizeBadEnv(t *testing.T) {
	t.Setenv("RATION_JOBS", "abc")
	var logged bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	p := newPool(t, 0)
	if want := min(2*runtime.GOMAXPROCS(0), 8); p.Size() != want {
		t.Errorf("New(0) with RATION_JOBS=abc: size %d, want the default %d", p.Size(), want)
	}
	if n := strings.Count(logged.String(), "level=WARN"); n != 1 || !strings.Contains(logged.String(), "RATION_JOBS") {
		t.Errorf("New(0) with RATION_JOBS=abc logged %q; want one warning naming RATION_JOBS", logged.String())
	}
	n, why, err := pool.DefaultSize()
	if err == nil || n != p.Size() || !strings.Contains(why, `RATION_JOBS="abc" ignored`) {
		t.Errorf("DefaultSize = %d, %q, %v; want the pool's size, a reason that says RATION_JOBS was ignored, and an error", n, why, err)
	}
}

// TestDefaultSizeForms checks each form of RATION_JOBS against GOMAXPROCS, the
// cap of 8 on the default, and that the reason names what decided.
func TestDefaultSizeForms(t *testing.T) {
	tests := []struct {
		env     string
		procs   int
		want    int
		reason  string
		wantErr string
	}{
		{"", 2, 4, "size 4: 2 x GOMAXPROCS 2 = 4", ""},
		{"", 1, 2, "size 2: 2 x GOMAXPROCS 1 = 2", ""},
		{"", 16, 8, "size 8: 2 x GOMAXPROCS 16 = 32, capped at 8", ""},
		{"12", 2, 12, "size 12: RATION_JOBS=12", ""},
		{" 3 ", 16, 3, "size 3: RATION_JOBS=3", ""},
		{"50%", 16, 8, "size 8: RATION_JOBS=50% of GOMAXPROCS 16 = 8", ""},
		{"10%", 2, 1, "size 1: RATION_JOBS=10% of GOMAXPROCS 2 = 1", ""},
		{"+2", 16, 18, "size 18: RATION_JOBS=+2: GOMAXPROCS 16 + 2 = 18, at least 1", ""},
		{"-4", 2, 1, "size 1: RATION_JOBS=-4: GOMAXPROCS 2 - 4 = 1, at least 1", ""},
		{"abc", 2, 4, `size 4: RATION_JOBS="abc" ignored; 2 x GOMAXPROCS 2 = 4`,
			`pool: RATION_JOBS: "abc" is not a whole number >= 1, +N, -N or a percentage like 50%`},
		{"0", 16, 8, `size 8: RATION_JOBS="0" ignored; 2 x GOMAXPROCS 16 = 32, capped at 8`,
			`pool: RATION_JOBS: "0" is not a whole number >= 1, +N, -N or a percentage like 50%`},
		{"0%", 2, 4, `size 4: RATION_JOBS="0%" ignored; 2 x GOMAXPROCS 2 = 4`,
			`pool: RATION_JOBS: "0%" is not a percentage above 0 like 50%`},
	}
	for _, tt := range tests {
		t.Run(tt.env+"/"+strconv.Itoa(tt.procs), func(t *testing.T) {
			t.Setenv("RATION_JOBS", tt.env)
			// Restored to what the testing package set (its -cpu).
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tt.procs))
			n, why, err := pool.DefaultSize()
			if n != tt.want || why != tt.reason || fmt.Sprint(err) != fmt.Sprint(errOrNil(tt.wantErr)) {
				t.Errorf("DefaultSize = %d, %q, %v; want %d, %q, %s", n, why, err, tt.want, tt.reason, tt.wantErr)
			}
			if tt.wantErr == "" {
				p := newPool(t, 0)
				if p.Size() != tt.want {
					t.Errorf("New(0).Size() = %d, want %d", p.Size(), tt.want)
				}
			}
		})
	}
}

func errOrNil(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// TestDefaultSizeAcceptsWhatLimitsAccepts keeps pool's reading of
// RATION_JOBS, which cannot import package limits, the same as limits':
// the same values are valid, and an invalid one is named alike.
func TestDefaultSizeAcceptsWhatLimitsAccepts(t *testing.T) {
	for _, v := range []string{"1", "8", " 4 ", "+0", "+2", "-1", "-9", "50%", "12.5%", " 200% ",
		"0", "-", "+", "abc", "1.5", "0%", "-5%", "+5%", "1e2%", "0x10%", "NaN%", "Inf%", "5 %", "%", "1_0%", "08"} {
		t.Setenv("RATION_JOBS", v)
		_, _, perr := pool.DefaultSize()
		lerr := limits.CheckJobs(v)
		if (perr == nil) != (lerr == nil) {
			t.Errorf("RATION_JOBS=%q: pool says %v, limits says %v", v, perr, lerr)
		} else if lerr != nil && perr.Error() != "pool: RATION_JOBS: "+lerr.Error() {
			t.Errorf("RATION_JOBS=%q: pool says %q, limits says %q", v, perr, lerr)
		}
	}
}
