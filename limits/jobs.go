package limits

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// request is a parsed jobs request and where it came from.
type request struct {
	n        int     // > 0: exactly n jobs
	percent  float64 // > 0: percent of the effective CPUs
	relative bool    // +N or -N: the effective CPUs plus offset
	offset   int
	text     string // as given, trimmed
	source   string // "default", "-j" or "RATION_JOBS" (Decision.JobsSource)
}

// flag is how the reason names the request: "-j 50%" or "RATION_JOBS=50%".
func (r request) flag() string {
	if r.source == "RATION_JOBS" {
		return "RATION_JOBS=" + r.text
	}
	return "-j " + r.text
}

// requestedJobs is the jobs request: jobs (Options.Jobs) when given, else
// the RATION_JOBS variable, else the default policy. An error names
// where the bad value came from: "jobs: ..." or "RATION_JOBS: ...".
func requestedJobs(jobs string, getenv func(string) string) (request, error) {
	if jobs != "" {
		r, err := parseJobs(jobs)
		if err != nil {
			return request{}, fmt.Errorf("jobs: %w", err)
		}
		r.source = "-j"
		return r, nil
	}
	if v := getenv("RATION_JOBS"); v != "" {
		r, err := parseJobs(v)
		if err != nil {
			return request{}, fmt.Errorf("RATION_JOBS: %w", err)
		}
		r.source = "RATION_JOBS"
		return r, nil
	}
	return request{source: "default"}, nil
}

// CheckJobs reports whether s is a valid Options.Jobs value: "" (the default
// policy), a whole number N >= 1 ("8"), GNU parallel's +N or -N (the
// effective CPUs, rounded down, plus or minus N: "+2", "-1"), or a percentage
// N% of the effective CPUs with N > 0 ("50%", "12.5%"); white space around it
// is ignored. The error names the value and what it should be, not where it
// came from: a caller that read it from a flag or a file adds that.
func CheckJobs(s string) error {
	_, err := parseJobs(s)
	return err
}

// parseJobs parses "N" (N >= 1), "+N" or "-N" (N >= 0), or "N%" (N > 0,
// may have a fraction).
func parseJobs(s string) (request, error) {
	if s == "" {
		return request{}, nil
	}
	t := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || strings.ContainsAny(p, "+-eExXpP_") {
			return request{}, fmt.Errorf("%q is not a percentage above 0 like 50%%", s)
		}
		return request{percent: v, text: t}, nil
	}
	n, err := strconv.Atoi(t)
	switch {
	case err != nil:
	case strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-"):
		return request{relative: true, offset: n, text: t}, nil
	case n >= 1:
		return request{n: n, text: t}, nil
	}
	return request{}, fmt.Errorf("%q is not a whole number >= 1, +N, -N or a percentage like 50%%", s)
}
