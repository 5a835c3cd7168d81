package flagvalue

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses a duration in Go syntax ("500ms", "2m", "1h30m") or
// as plain seconds ("0.5", "20"), like GNU parallel's --timeout, or in GNU
// parallel's other units: d for days, and s, m, h, d in capitals ("1d",
// "2H", "1d12h"). Negative, NaN and infinite values are errors, e.g. `"x"
// is not a duration`.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		if f < 0 || math.IsNaN(f) || f*1e9 > math.MaxInt64 {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		d, err = gnuTimeUnits(t)
	}
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	return d, nil
}

// gnuTimeUnits parses numbers each followed by one of GNU parallel's time
// units (s, m, h, d, in either case), summed as GNU's multiply_time_units
// sums them.
func gnuTimeUnits(t string) (time.Duration, error) {
	units := map[byte]float64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400}
	if t == "" {
		return 0, strconv.ErrSyntax
	}
	var secs float64
	for t != "" {
		i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if i <= 0 {
			return 0, strconv.ErrSyntax
		}
		f, err := strconv.ParseFloat(t[:i], 64)
		unit, ok := units[t[i]|0x20]
		if err != nil || !ok {
			return 0, strconv.ErrSyntax
		}
		secs += f * unit
		t = t[i+1:]
	}
	if secs*1e9 > math.MaxInt64 {
		return 0, strconv.ErrRange
	}
	return time.Duration(secs * float64(time.Second)), nil
}
