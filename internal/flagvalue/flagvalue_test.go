package flagvalue

import (
	"strings"
	"testing"
	"time"
)

func TestParsers(t *testing.T) {
	// GNU parallel's units too: d, and capitals (parallel --timeout 1d).
	for in, want := range map[string]time.Duration{"0.5": 500 * time.Millisecond, "2m": 2 * time.Minute, "20": 20 * time.Second, "0": 0,
		"1d": 24 * time.Hour, "1.5d": 36 * time.Hour, "2H": 2 * time.Hour, "3M": 3 * time.Minute, "1d12h": 36 * time.Hour, "10S": 10 * time.Second} {
		if d, err := ParseDuration(in); err != nil || d != want {
			t.Errorf("ParseDuration(%q) = %v, %v", in, d, err)
		}
	}
	for _, in := range []string{"abc", "-1", "-1s", "NaN", "", "1e300", "d", "1x", "1w", "1.2.3d", "1e300d"} {
		if _, err := ParseDuration(in); err == nil || strings.Contains(err.Error(), "--") || strings.Contains(err.Error(), "usage error") {
			t.Errorf("ParseDuration(%q): %v", in, err)
		}
	}
	for _, in := range []string{"3", "3/3", "-1/3", "a/3", "0/0", "1/"} {
		if _, err := ParseShard(in); err == nil || strings.Contains(err.Error(), "--") || strings.Contains(err.Error(), "usage error") {
			t.Errorf("ParseShard(%q): %v", in, err)
		}
	}
	// The error says which part is wrong: a non-number is not "out of range".
	for in, want := range map[string]string{
		"abc/3": `index "abc" is not a whole number`, "1/x": `count "x" is not a whole number`,
		"3/3": "want 0 <= I < N", "0/0": "want 0 <= I < N",
	} {
		if _, err := ParseShard(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseShard(%q) = %v, want it to say %s", in, err, want)
		}
	}
}
