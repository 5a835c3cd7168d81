package runner

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrUsage is wrapped by the errors of the option parsers and of New for
// invalid options: the CLI reports them with exit status 255.
var ErrUsage = errors.New("usage error")

// ParseDuration parses a duration in Go syntax ("500ms", "2m", "1h30m") or
// as plain seconds ("0.5", "20"), like GNU parallel's --timeout. Negative,
// NaN and infinite values are errors wrapping ErrUsage.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		if f < 0 || math.IsNaN(f) || f*1e9 > math.MaxInt64 {
			return 0, fmt.Errorf("%w: %q is not a duration", ErrUsage, s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: %q is not a duration", ErrUsage, s)
	}
	return d, nil
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

// ParseShard parses "I/N" with 0 <= I < N; errors wrap ErrUsage.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("%w: shard %q is not I/N", ErrUsage, s)
	}
	return NewShard(i, n)
}

// NewShard builds a shard from the index and count as strings (as they
// come from JOB_COMPLETION_INDEX and RATION_SHARD_COUNT); errors wrap
// ErrUsage.
func NewShard(index, count string) (Shard, error) {
	iv, err1 := strconv.Atoi(strings.TrimSpace(index))
	nv, err2 := strconv.Atoi(strings.TrimSpace(count))
	if err1 != nil || err2 != nil || nv < 1 || iv < 0 || iv >= nv {
		return Shard{}, fmt.Errorf("%w: shard %s/%s: want 0 <= I < N", ErrUsage, index, count)
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

// HaltWhen says what --halt does once its condition holds.
type HaltWhen int

// The --halt modes.
const (
	HaltNever HaltWhen = iota // run every job
	HaltSoon                  // start no more jobs, let the running ones finish
	HaltNow                   // start no more jobs and stop the running ones
)

// HaltOn is what --halt counts.
type HaltOn int

// The --halt conditions.
const (
	HaltOnFail    HaltOn = iota // failed jobs
	HaltOnSuccess               // succeeded jobs
	HaltOnDone                  // finished jobs, either way
)

// HaltMinJobs is how many jobs must have finished before a percentage
// condition (fail=P%) is checked, so that one early failure does not stop a
// long run. Inputs are read lazily, so the total is not known in advance
// as GNU parallel, which reads all input first, knows it.
const HaltMinJobs = 10

// Halt is a --halt policy. The zero value never halts.
type Halt struct {
	When HaltWhen
	On   HaltOn
	// Count is the number of jobs that triggers the halt; with Percent
	// set it is unused.
	Count int64
	// Percent, when > 0, triggers the halt once at least HaltMinJobs jobs
	// finished and Percent % of the finished jobs count.
	Percent float64
}

// ParseHalt parses a --halt value as GNU parallel does: "never",
// "now|soon,fail|success|done=N|P%", a bare "P%" (soon,fail=P%), and the
// legacy numbers 0 (never), 1 (soon,fail=1), 2 (now,fail=1), -1
// (soon,success=1), -2 (now,success=1). Errors wrap ErrUsage.
func ParseHalt(s string) (Halt, error) {
	legacy := map[string]string{"0": "never", "1": "soon,fail=1", "2": "now,fail=1", "-1": "soon,success=1", "-2": "now,success=1"}
	v := strings.TrimSpace(s)
	if l, ok := legacy[v]; ok {
		v = l
	}
	if strings.HasSuffix(v, "%") && !strings.Contains(v, ",") {
		v = "soon,fail=" + v
	}
	bad := func() (Halt, error) {
		return Halt{}, fmt.Errorf("%w: --halt %q: want never, or now|soon,fail|success|done=N|P%%", ErrUsage, s)
	}
	if v == "never" {
		return Halt{}, nil
	}
	when, rest, ok := strings.Cut(v, ",")
	if !ok {
		return bad()
	}
	var h Halt
	switch when {
	case "now":
		h.When = HaltNow
	case "soon":
		h.When = HaltSoon
	default:
		return bad()
	}
	on, val, ok := strings.Cut(rest, "=")
	if !ok {
		return bad()
	}
	switch on {
	case "fail":
		h.On = HaltOnFail
	case "success":
		h.On = HaltOnSuccess
	case "done":
		h.On = HaltOnDone
	default:
		return bad()
	}
	if p, ok := strings.CutSuffix(val, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || !(f > 0 && f <= 100) {
			return bad()
		}
		h.Percent = f
		return h, nil
	}
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil || n < 1 {
		return bad()
	}
	h.Count = n
	return h, nil
}

// triggered reports whether the counts meet the condition.
func (h Halt) triggered(failed, succeeded int64) bool {
	if h.When == HaltNever {
		return false
	}
	n := failed
	switch h.On {
	case HaltOnSuccess:
		n = succeeded
	case HaltOnDone:
		n = failed + succeeded
	}
	if h.Percent > 0 {
		done := failed + succeeded
		return done >= HaltMinJobs && float64(n)*100 >= h.Percent*float64(done)
	}
	return n >= h.Count
}
