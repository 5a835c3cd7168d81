package runner

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

// Shard selects the inputs of one shard of a run split over Count
// independent runs (Kubernetes Indexed Jobs): an input belongs to shard
// Index iff the FNV-1a 64-bit hash of its bytes, modulo Count, equals
// Index. Every run decides alone, from the input alone, so the shards are
// disjoint and cover every input whatever order or machine they run on.
// The zero Shard (Count 0) and Count 1 hold every input.
type Shard struct {
	Index, Count int
}

// ParseShard parses "I/N" with 0 <= I < N. Its errors do not say
// "shard": the caller names the flag or variable it came from.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("%q is not I/N", s)
	}
	return NewShard(i, n)
}

// NewShard builds a shard from the index and count as strings (as they
// come from JOB_COMPLETION_INDEX and RATION_SHARD_COUNT).
func NewShard(index, count string) (Shard, error) {
	iv, err := strconv.Atoi(strings.TrimSpace(index))
	if err != nil {
		return Shard{}, fmt.Errorf("%s/%s: index %q is not a whole number", index, count, index)
	}
	nv, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil {
		return Shard{}, fmt.Errorf("%s/%s: count %q is not a whole number", index, count, count)
	}
	if nv < 1 || iv < 0 || iv >= nv {
		return Shard{}, fmt.Errorf("%s/%s: want 0 <= I < N", index, count)
	}
	return Shard{Index: iv, Count: nv}, nil
}

// Contains reports whether input belongs to the shard.
func (s Shard) Contains(input string) bool {
	if s.Count <= 1 {
		return true
	}
	return fnv1a64(input)%uint64(s.Count) == uint64(s.Index)
}

// fnv1a64 is FNV-1a, 64 bit, over the bytes of s (as hash/fnv's New64a,
// without its allocations).
func fnv1a64(s string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	return h
}

// String returns "I/N", or "" for the zero Shard.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}
