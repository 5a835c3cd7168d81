package pool

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// maxDefaultSize caps the default size, as package limits' default policy
// does: a big host does not start dozens of tasks unless asked to.
const maxDefaultSize = 8

// DefaultSize returns the size [New] uses when it is given size <= 0, and
// why:
//
//   - RATION_JOBS, when set, in the syntax of ration's -j: N (a whole
//     number >= 1) is exactly N; N% is N percent of GOMAXPROCS, rounded
//     down; +N and -N are GOMAXPROCS plus or minus N; at least 1, not
//     capped.
//   - Otherwise 2 x runtime.GOMAXPROCS(0), at most 8.
//
// GOMAXPROCS stands in for the container's CPU count: since Go 1.25 the
// runtime sets it from the CPU quota of the process's own cgroup (rounded
// up, at least 2, at most the CPU affinity) and follows its changes. The
// pool reads no cgroup files itself; for package limits' policy (the
// tightest quota of the whole cgroup hierarchy, a fractional quota, the
// cpuset), pass the count of [limits.Jobs] to New.
//
// err is non-nil when RATION_JOBS is set but invalid; size and reason are
// then the default's (2 x GOMAXPROCS, at most 8), which is what New uses,
// and reason says the variable was ignored. DefaultSize reads the
// environment and GOMAXPROCS anew on every call.
//
// [limits.Jobs]: https://pkg.go.dev/github.com/ration-run/ration/limits#Jobs
func DefaultSize() (size int, reason string, err error) {
	return defaultSize(os.Getenv("RATION_JOBS"), runtime.GOMAXPROCS(0))
}

// defaultSize is DefaultSize for the value of RATION_JOBS env and
// GOMAXPROCS procs.
func defaultSize(env string, procs int) (int, string, error) {
	procs = max(procs, 1)
	def := min(2*procs, maxDefaultSize)
	why := fmt.Sprintf("2 x GOMAXPROCS %d = %d", procs, 2*procs)
	if 2*procs > maxDefaultSize {
		why += fmt.Sprintf(", capped at %d", maxDefaultSize)
	}
	if env == "" {
		return def, fmt.Sprintf("size %d: %s", def, why), nil
	}
	n, why2, err := envSize(env, procs)
	if err != nil {
		return def, fmt.Sprintf("size %d: RATION_JOBS=%q ignored; %s", def, env, why), fmt.Errorf("pool: RATION_JOBS: %w", err)
	}
	return n, fmt.Sprintf("size %d: RATION_JOBS=%s", n, why2), nil
}

// envSize evaluates a RATION_JOBS value against procs CPUs. Its errors
// read as package limits' (CheckJobs), so that both name a bad value
// alike.
func envSize(env string, procs int) (int, string, error) {
	t := strings.TrimSpace(env)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || strings.ContainsAny(p, "+-eExXpP_") {
			return 0, "", fmt.Errorf("%q is not a percentage above 0 like 50%%", env)
		}
		n := max(1, int(math.Floor(v/100*float64(procs))))
		return n, fmt.Sprintf("%s of GOMAXPROCS %d = %d", t, procs, n), nil
	}
	n, err := strconv.Atoi(t)
	switch {
	case err != nil:
	case strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-"):
		size, sign := max(1, procs+n), "+"
		if n < 0 {
			sign = "-"
		}
		return size, fmt.Sprintf("%s: GOMAXPROCS %d %s %d = %d, at least 1", t, procs, sign, max(n, -n), size), nil
	case n >= 1:
		return n, t, nil
	}
	return 0, "", fmt.Errorf("%q is not a whole number >= 1, +N, -N or a percentage like 50%%", env)
}
