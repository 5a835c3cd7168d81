package limits

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSize parses a byte size such as "100MiB", "1GiB", "512M", "1.5G",
// "64k" or "4096". The number may have a fraction when it has a unit
// other than bytes; the result is rounded down to whole bytes. A fraction
// of a byte ("1.5") is an error: a unit was forgotten. Units are
// case-insensitive and follow GNU coreutils (sort -S, dd, df): K, M, G,
// T, P and their IEC forms KiB, MiB, GiB, TiB, PiB are powers of 1024;
// KB, MB, GB, TB, PB are powers of 1000; "B" or no unit means bytes.
// White space between number and unit is allowed. "0" is valid (callers
// use 0 for "no size"). Negative, NaN, infinite or overflowing (>
// MaxInt64) sizes, and unknown units, are errors that name the text
// ("invalid size "12X": unknown unit ...").
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	if num == "" {
		return 0, fmt.Errorf("invalid size %q: want a number with an optional unit such as 512M, 100MiB or 1GiB", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("invalid size %q: bad number %q", s, num)
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("invalid size %q: unknown unit %q (use K, M, G, T, KiB, MiB, GiB, TiB, KB, MB, GB, TB or B)", s, strings.TrimSpace(t[i:]))
	}
	if mult == 1 && v != math.Floor(v) {
		// "--mem-per-job 1.5" meant 1.5 of some unit, not one byte.
		return 0, fmt.Errorf("invalid size %q: a fraction of a byte (a unit is missing: 1.5G, 1.5M?)", s)
	}
	b := math.Floor(v * mult)
	// float64(MaxInt64) rounds up to 2^63, so ">=" rejects exactly the
	// values that do not fit.
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return int64(b), nil
}

var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "ki": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mi": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gi": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "ti": 1 << 40, "tb": 1e12,
	"p": 1 << 50, "pib": 1 << 50, "pi": 1 << 50, "pb": 1e15,
}

// FormatSize renders n bytes for people: the largest IEC unit that keeps
// the number at least 1, with up to two decimals ("256 MiB", "1.5 GiB",
// "512 B").
func FormatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(n), 0
	for (v >= 1024 || v <= -1024) && u < len(units)-1 {
		v /= 1024
		u++
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + " " + units[u]
}
