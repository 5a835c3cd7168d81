package runner

import (
	"fmt"
	"strconv"
	"strings"
)

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
// (soon,success=1), -2 (now,success=1). The error quotes s and says
// what is wanted.
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
		return Halt{}, fmt.Errorf("%q: want never, or now|soon,fail|success|done=N|P%%", s)
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
