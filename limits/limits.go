// Package limits decides how many jobs ration runs at once, and says why.
//
// # Policy
//
// The effective CPU count is the smallest of the process's scheduler
// affinity (sched_getaffinity, or Cpus_allowed_list of a snapshot), its
// cpuset size, and its CPU quota (quota / period, the tightest over the
// cgroup hierarchy; see package cgroup). It is fractional: a 1.5-CPU quota
// gives 1.5.
//
//   - Default: jobs = max(1, min(floor(2 x effective CPUs), 8)). Two jobs
//     per CPU keep a CPU busy while its other job waits on I/O; 8 keeps a
//     big host from starting dozens of memory-hungry jobs by default.
//   - -j N, or RATION_JOBS=N when -j is not given: exactly N (N >= 1).
//   - -j N%, or RATION_JOBS=N%: floor(N/100 x effective CPUs), at least 1,
//     not capped at 8 (the user asked for a share of the CPUs).
//   - Memory: when a per-job size is given, jobs <= floor(0.9 x memory
//     limit / per-job size), never below 1 (a warning says when even one
//     job does not fit). The memory limit is the cgroup's; when the cgroup
//     has none, the host's MemTotal stands in, since it is the real bound.
//     The cap applies to the default and to N%. An explicit -j N (or
//     RATION_JOBS=N) wins over it: the user may know their jobs' real
//     size better than the estimate; a warning says how many would fit.
//
// Every Decision carries a Reason, one sentence naming every input and
// the one that decided, e.g.
//
//	jobs=1: cgroup v1 CPU quota 0.50 CPUs (50000/100000 us) at /ration-test < 2 host CPUs (affinity 2, cpuset 0-1); 2 x 0.50 = 1.00
//
// Inputs equal to the host CPU count are named in parentheses after it.
//
// Unreadable or malformed cgroup files never fail a decision: they become
// Warnings and the decision falls back to the CPU counts that remain
// (ultimately the host's). Only invalid user input (a -j or RATION_JOBS
// value, a negative per-job size) is an error, wrapping ErrUsage.
//
// # Snapshots (--fs-root)
//
// With Options.FSRoot set, everything is read below that directory: the
// affinity from proc/self/status Cpus_allowed_list, the host CPU count
// from sys/devices/system/cpu/online (or, when absent, the affinity list;
// when both are absent, this machine's count with a warning), and host
// memory from proc/meminfo. AdjustGOMAXPROCS does nothing for such a
// Decision, since it does not describe this process.
//
// # GOMAXPROCS and automaxprocs
//
// ration does not link go.uber.org/automaxprocs. The module requires Go
// 1.26 (go.mod), and since Go 1.25 the runtime itself sets GOMAXPROCS from
// the cgroup CPU limit (rounded up, at least 2, never above the affinity
// count) and re-reads it about once a second. automaxprocs v1.6.0 would
// make things worse on such a runtime: it rounds down (1.5 CPUs -> 1) and
// ends with runtime.GOMAXPROCS(n), which switches the runtime's periodic
// updates off for good, so a later resize of the container would go
// unnoticed. A "//go:build !go1.25" file using it for older toolchains
// would be dead code: a toolchain older than the go.mod line cannot build
// this module, so it could never be compiled or tested.
//
// What the runtime misses is the hierarchy: it reads only the leaf
// cgroup's quota and keeps the file descriptors of the cgroup it started
// in (golang/go#81180). AdjustGOMAXPROCS corrects exactly that case: when
// our walk finds a tighter limit than the leaf, and it would give a
// smaller GOMAXPROCS by the runtime's own rounding, it lowers GOMAXPROCS
// (accepting that the runtime then stops updating; callers re-run it on
// every re-read of the limits). When the tighter limit disappears it calls
// runtime.SetDefaultGOMAXPROCS to hand control back to the runtime. It
// never raises GOMAXPROCS above the runtime's choice and leaves it alone
// when the GOMAXPROCS environment variable or GODEBUG=containermaxprocs=0
// is set.
package limits

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/ration-run/ration/cgroup"
)

// ErrUsage is wrapped by every error caused by invalid user input: a bad
// -j or RATION_JOBS value, a bad size, a negative per-job memory size.
// The CLI maps it to exit status 255.
var ErrUsage = errors.New("usage error")

// DefaultMaxJobs caps the default number of jobs (not -j N or N%).
const DefaultMaxJobs = 8

// MemoryHeadroom is the share of the memory limit that jobs may use; the
// rest is left for ration itself, page cache and estimation error.
const MemoryHeadroom = 0.9

// Options are the inputs of Decide besides the kernel's.
type Options struct {
	// FSRoot is the filesystem root to read from; "" is the live system.
	FSRoot string
	// Jobs is the -j value: "", "N" or "N%". "" falls back to the
	// RATION_JOBS environment variable, then to the default policy.
	Jobs string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// MemPerJob is the expected memory of one job in bytes; 0 means no
	// memory cap. Negative is a usage error.
	MemPerJob int64
}

// Decision is how many jobs to run and why. Its JSON form is what
// `ration limits --json` prints; pointer fields are null when unknown or
// unlimited.
type Decision struct {
	// FSRoot is the root the inputs were read from, "" for the live system.
	FSRoot string `json:"fs_root,omitempty"`
	// CgroupVersion is 1 or 2 (the version controlling CPU, else memory),
	// null when no cgroup was found. Hybrid is true on a hybrid host.
	CgroupVersion *int `json:"cgroup_version"`
	Hybrid        bool `json:"hybrid"`
	// CPUCgroup is the process's cgroup path in the CPU hierarchy.
	CPUCgroup string `json:"cpu_cgroup,omitempty"`
	// CPUQuota is the tightest CPU quota in CPUs, null when unlimited;
	// CPUQuotaUs and CPUPeriodUs are its raw values and CPUQuotaCgroup
	// and CPUQuotaFile where it was found.
	CPUQuota       *float64 `json:"cpu_quota"`
	CPUQuotaUs     int64    `json:"cpu_quota_us,omitempty"`
	CPUPeriodUs    int64    `json:"cpu_period_us,omitempty"`
	CPUQuotaCgroup string   `json:"cpu_quota_cgroup,omitempty"`
	CPUQuotaFile   string   `json:"cpu_quota_file,omitempty"`
	// LeafCPUQuota is the quota of the process's own cgroup (what the Go
	// runtime sees), null when unlimited.
	LeafCPUQuota *float64 `json:"leaf_cpu_quota"`
	// CPUSetCPUs is the number of CPUs in the cpuset, null when unknown;
	// CPUSetList the list in kernel syntax.
	CPUSetCPUs *int   `json:"cpuset_cpus"`
	CPUSetList string `json:"cpuset_list,omitempty"`
	// AffinityCPUs and HostCPUs are the affinity and online CPU counts.
	AffinityCPUs int `json:"affinity_cpus"`
	HostCPUs     int `json:"host_cpus"`
	// EffectiveCPUs is min(affinity, cpuset, quota), fractional.
	EffectiveCPUs float64 `json:"effective_cpus"`
	// MemoryCgroup is the process's cgroup path in the memory hierarchy.
	MemoryCgroup string `json:"memory_cgroup,omitempty"`
	// MemoryLimitBytes is the tightest memory limit, null when unlimited;
	// MemoryLimitCgroup is where it was found.
	MemoryLimitBytes  *int64 `json:"memory_limit_bytes"`
	MemoryLimitCgroup string `json:"memory_limit_cgroup,omitempty"`
	// MemoryHighBytes is the tightest v2 memory.high, null when none.
	MemoryHighBytes  *int64 `json:"memory_high_bytes"`
	MemoryUsageBytes int64  `json:"memory_usage_bytes"`
	HostMemoryBytes  int64  `json:"host_memory_bytes"`
	// MemPerJobBytes is Options.MemPerJob; MemoryMaxJobs the number of
	// jobs that fit by memory (null when no per-job size was given).
	MemPerJobBytes int64 `json:"mem_per_job_bytes"`
	MemoryMaxJobs  *int  `json:"memory_max_jobs"`
	// DefaultJobs is what the default policy would choose (with the
	// memory cap), whatever -j says.
	DefaultJobs int `json:"default_jobs"`
	// Jobs is the decision, always >= 1.
	Jobs int `json:"jobs"`
	// JobsSource is "default", "-j" or "RATION_JOBS".
	JobsSource string `json:"jobs_source"`
	// DecidedBy names the input that decided: "cpu_quota", "cpuset",
	// "affinity", "host" (default policy or N%), "max" (the cap of 8),
	// "min" (raised to 1), "memory", or "explicit" (-j N).
	DecidedBy string `json:"decided_by"`
	// Reason is one human sentence naming every input and the decider.
	Reason string `json:"reason"`
	// Warnings are the cgroup reading problems and policy warnings; never
	// nil.
	Warnings []string `json:"warnings"`

	// Snapshot is the raw reading the decision was made from.
	Snapshot cgroup.Snapshot `json:"-"`
}

// Decide reads the kernel's limits (below opts.FSRoot) and applies the
// policy. The error is non-nil only for invalid user input (wrapping
// ErrUsage); cgroup problems become Decision.Warnings.
func Decide(opts Options) (Decision, error) {
	spec, source, err := jobsSpec(opts)
	if err != nil {
		return Decision{Warnings: []string{}}, err
	}
	if opts.MemPerJob < 0 {
		return Decision{Warnings: []string{}}, fmt.Errorf("%w: negative memory per job %d", ErrUsage, opts.MemPerJob)
	}
	snap, _ := cgroup.Reader{Root: opts.FSRoot}.Read() // a read error is also in snap.Warnings
	d := decide(snap, spec, source, opts.MemPerJob)
	d.FSRoot = opts.FSRoot
	if d.FSRoot == "/" {
		d.FSRoot = ""
	}
	return d, nil
}

// DecideFrom applies the policy to an existing Snapshot, e.g. one re-read
// during a run. jobs is a -j value ("", "N", "N%"); unlike Decide it does
// not consult RATION_JOBS. The error is non-nil only for an invalid jobs
// value or a negative memPerJob, wrapping ErrUsage.
func DecideFrom(snap cgroup.Snapshot, jobs string, memPerJob int64) (Decision, error) {
	spec, err := parseJobs(jobs, "-j")
	if err != nil {
		return Decision{Warnings: []string{}}, err
	}
	if memPerJob < 0 {
		return Decision{Warnings: []string{}}, fmt.Errorf("%w: negative memory per job %d", ErrUsage, memPerJob)
	}
	source := "default"
	if jobs != "" {
		source = "-j"
	}
	return decide(snap, spec, source, memPerJob), nil
}

// jobsRequest is a parsed -j value.
type jobsRequest struct {
	n       int     // > 0: exactly n jobs
	percent float64 // > 0: percent of effective CPUs
	text    string
}

func jobsSpec(opts Options) (jobsRequest, string, error) {
	if opts.Jobs != "" {
		r, err := parseJobs(opts.Jobs, "-j")
		return r, "-j", err
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if v := getenv("RATION_JOBS"); v != "" {
		r, err := parseJobs(v, "RATION_JOBS")
		return r, "RATION_JOBS", err
	}
	return jobsRequest{}, "default", nil
}

// parseJobs parses "N" (N >= 1) or "N%" (N > 0, may have a fraction).
func parseJobs(s, name string) (jobsRequest, error) {
	if s == "" {
		return jobsRequest{}, nil
	}
	t := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || strings.ContainsAny(p, "+-eExXpP_") {
			return jobsRequest{}, fmt.Errorf("%w: invalid %s value %q: want N or N%% with N > 0", ErrUsage, name, s)
		}
		return jobsRequest{percent: v, text: t}, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 || strings.HasPrefix(t, "+") {
		return jobsRequest{}, fmt.Errorf("%w: invalid %s value %q: want a whole number >= 1 or a percentage like 50%%", ErrUsage, name, s)
	}
	return jobsRequest{n: n, text: t}, nil
}

// input is one CPU count that takes part in the minimum.
type input struct {
	key   string
	value float64
	desc  string
}

func decide(s cgroup.Snapshot, req jobsRequest, source string, memPerJob int64) Decision {
	d := Decision{
		Hybrid:           s.Hybrid,
		CPUCgroup:        s.CPUCgroup,
		AffinityCPUs:     s.AffinityCPUs,
		HostCPUs:         s.HostCPUs,
		MemoryCgroup:     s.MemoryCgroup,
		MemoryUsageBytes: s.MemoryUsage,
		HostMemoryBytes:  s.HostMemory,
		MemPerJobBytes:   memPerJob,
		JobsSource:       source,
		Warnings:         append([]string{}, s.Warnings...),
		Snapshot:         s,
	}
	if s.Version != 0 {
		d.CgroupVersion = ptr(s.Version)
	}
	if s.CPUQuota > 0 {
		d.CPUQuota = ptr(s.CPUQuota)
		d.CPUQuotaUs, d.CPUPeriodUs = s.CPUQuotaUs, s.CPUPeriodUs
		d.CPUQuotaCgroup, d.CPUQuotaFile = s.CPUQuotaCgroup, s.CPUQuotaFile
	}
	if s.LeafCPUQuota > 0 {
		d.LeafCPUQuota = ptr(s.LeafCPUQuota)
	}
	if n := s.CPUSetCount(); n > 0 {
		d.CPUSetCPUs = ptr(n)
		d.CPUSetList = FormatCPUList(s.CPUSet)
	}
	if s.MemoryLimit > 0 {
		d.MemoryLimitBytes = ptr(s.MemoryLimit)
		d.MemoryLimitCgroup = s.MemoryLimitCgroup
	}
	if s.MemoryHigh > 0 {
		d.MemoryHighBytes = ptr(s.MemoryHigh)
	}

	// The CPU inputs, in the order that names the decider on a tie: the
	// most specific limit first.
	host := max(s.HostCPUs, 1)
	var ins []input
	if s.CPUQuota > 0 {
		ins = append(ins, input{"cpu_quota", s.CPUQuota, fmt.Sprintf("cgroup v%d CPU quota %.2f CPUs (%d/%d us) at %s",
			s.CPUVersion, s.CPUQuota, s.CPUQuotaUs, s.CPUPeriodUs, s.CPUQuotaCgroup)})
	}
	if n := s.CPUSetCount(); n > 0 && n != host {
		ins = append(ins, input{"cpuset", float64(n), fmt.Sprintf("cpuset %s (%d CPUs)", d.CPUSetList, n)})
	}
	if s.AffinityCPUs > 0 && s.AffinityCPUs != host {
		ins = append(ins, input{"affinity", float64(s.AffinityCPUs), fmt.Sprintf("%d affinity CPUs", s.AffinityCPUs)})
	}
	// Inputs equal to the host count are named with it, so the sentence
	// names every input without a chain of "=".
	var same []string
	if s.AffinityCPUs == host && s.AffinitySource != s.HostCPUsSource {
		same = append(same, fmt.Sprintf("affinity %d", host))
	}
	if s.CPUSetCount() == host {
		same = append(same, "cpuset "+d.CPUSetList)
	}
	hostDesc := fmt.Sprintf("%d host CPUs", host)
	if len(same) > 0 {
		hostDesc += " (" + strings.Join(same, ", ") + ")"
	}
	ins = append(ins, input{"host", float64(host), hostDesc})
	dec := 0
	for i, in := range ins {
		if in.value < ins[dec].value {
			dec = i
		}
	}
	eff := ins[dec].value
	d.EffectiveCPUs = eff
	chain := describeChain(ins, dec)
	if s.CPUQuota == 0 {
		if s.CPUVersion != 0 {
			chain += fmt.Sprintf(", no CPU quota in cgroup v%d %s", s.CPUVersion, s.CPUCgroup)
		} else {
			chain += ", no CPU cgroup"
		}
	}

	// The default policy, always computed: -j N reports what it overrode.
	twice := 2 * eff
	def := int(math.Floor(twice + 1e-9))
	defBy, defWhy := ins[dec].key, fmt.Sprintf("2 x %s = %.2f", fmtCPUs(eff), twice)
	switch {
	case def > DefaultMaxJobs:
		def, defBy = DefaultMaxJobs, "max"
		defWhy += fmt.Sprintf(", capped at %d", DefaultMaxJobs)
	case def < 1:
		def, defBy = 1, "min"
		defWhy += ", raised to 1"
	}

	// The memory cap.
	memFit, memWhy := 0, ""
	if memPerJob > 0 {
		limit, what := s.MemoryLimit, ""
		switch {
		case s.MemoryLimit > 0:
			what = fmt.Sprintf("cgroup v%d memory limit %s at %s", s.MemoryVersion, FormatSize(limit), s.MemoryLimitCgroup)
		case s.HostMemory > 0:
			limit = s.HostMemory
			what = fmt.Sprintf("host memory %s (no cgroup memory limit)", FormatSize(limit))
		}
		if limit > 0 {
			share := MemoryHeadroom * float64(limit) / float64(memPerJob)
			memFit = int(math.Floor(share + 1e-9))
			memWhy = fmt.Sprintf("0.9 x %s / %s per job = %.2f", what, FormatSize(memPerJob), share)
			if memFit < 1 {
				d.Warnings = append(d.Warnings, fmt.Sprintf("even one job of %s does not fit in 0.9 x %s; running 1 job anyway", FormatSize(memPerJob), what))
				memFit = 1
			}
			d.MemoryMaxJobs = ptr(memFit)
		} else {
			d.Warnings = append(d.Warnings, "memory per job given but neither a cgroup memory limit nor the host memory is known; no memory cap applied")
		}
	}
	if memFit > 0 && memFit < def {
		def, defBy = memFit, "memory"
		defWhy += "; memory: " + memWhy + ", caps jobs at " + strconv.Itoa(memFit)
	} else if memFit > 0 {
		defWhy += "; memory: " + memWhy + ", no cap"
	}
	d.DefaultJobs = def

	switch {
	case req.n > 0:
		d.Jobs, d.DecidedBy = req.n, "explicit"
		flag := "-j " + req.text
		if source == "RATION_JOBS" {
			flag = "RATION_JOBS=" + req.text
		}
		d.Reason = fmt.Sprintf("jobs=%d: %s given (the default would be %d: %s; %s)", d.Jobs, flag, def, chain, defWhy)
		if memFit > 0 && req.n > memFit {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s exceeds what memory fits: %s, so only %d jobs", flag, memWhy, memFit))
		}
	case req.percent > 0:
		flag := "-j " + req.text
		if source == "RATION_JOBS" {
			flag = "RATION_JOBS=" + req.text
		}
		share := req.percent / 100 * eff
		n, by := int(math.Floor(share+1e-9)), ins[dec].key
		why := fmt.Sprintf("%s x %s effective CPUs = %.2f", flag, fmtCPUs(eff), share)
		if n < 1 {
			n, by = 1, "min"
			why += ", raised to 1"
		}
		if memFit > 0 && memFit < n {
			n, by = memFit, "memory"
			why += "; memory: " + memWhy + ", caps jobs at " + strconv.Itoa(memFit)
		} else if memFit > 0 {
			why += "; memory: " + memWhy + ", no cap"
		}
		d.Jobs, d.DecidedBy = n, by
		d.Reason = fmt.Sprintf("jobs=%d: %s; %s", n, chain, why)
	default:
		d.Jobs, d.DecidedBy = def, defBy
		d.Reason = fmt.Sprintf("jobs=%d: %s; %s", def, chain, defWhy)
	}
	return d
}

// describeChain renders the CPU inputs in ascending order starting with
// the decider: "A < B = C".
func describeChain(ins []input, dec int) string {
	rest := make([]input, 0, len(ins)-1)
	for i, in := range ins {
		if i != dec {
			rest = append(rest, in)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].value < rest[j].value })
	var b strings.Builder
	b.WriteString(ins[dec].desc)
	prev := ins[dec].value
	for _, in := range rest {
		if in.value == prev {
			b.WriteString(" = ")
		} else {
			b.WriteString(" < ")
		}
		b.WriteString(in.desc)
		prev = in.value
	}
	return b.String()
}

// fmtCPUs prints a CPU amount with two decimals, as the reasons do.
func fmtCPUs(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// FormatCPUList renders sorted CPU numbers in the kernel's list syntax,
// the inverse of cgroup.ParseCPUList: [0 1 2 3 8] -> "0-3,8".
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

// AdjustGOMAXPROCS corrects GOMAXPROCS for a limit the Go runtime cannot
// see (see the package doc): when the tightest CPU quota of d's hierarchy
// walk gives a smaller GOMAXPROCS than the leaf quota the runtime reads
// (with the runtime's rounding: up, at least 2, at most the affinity
// count), it lowers GOMAXPROCS to that; when there is no such limit but
// GOMAXPROCS is below the runtime's leaf-based value (an earlier
// correction), it calls runtime.SetDefaultGOMAXPROCS so the runtime
// follows the limit again. It does nothing for a Decision read from an
// FSRoot snapshot, or when the GOMAXPROCS environment variable or
// GODEBUG=containermaxprocs=0 is set. changed reports a call into the
// runtime; msg says what was done or why not. Safe to call on every
// re-read of the limits.
func AdjustGOMAXPROCS(d Decision) (changed bool, msg string) {
	return adjustGOMAXPROCS(d, os.Getenv)
}

func adjustGOMAXPROCS(d Decision, getenv func(string) string) (bool, string) {
	if d.FSRoot != "" {
		return false, "GOMAXPROCS left alone: the limits were read from " + d.FSRoot + ", not this process"
	}
	if v := getenv("GOMAXPROCS"); v != "" {
		return false, "GOMAXPROCS left alone: set in the environment to " + v
	}
	if strings.Contains(getenv("GODEBUG"), "containermaxprocs=0") {
		return false, "GOMAXPROCS left alone: GODEBUG=containermaxprocs=0"
	}
	cur := runtime.GOMAXPROCS(0)
	act, n := planGOMAXPROCS(d.Snapshot.LeafCPUQuota, d.Snapshot.CPUQuota, d.Snapshot.AffinityCPUs, cur)
	switch act {
	case lower:
		runtime.GOMAXPROCS(n)
		return true, fmt.Sprintf("GOMAXPROCS lowered from %d to %d for the CPU quota %.2f at %s, which the Go runtime does not see",
			cur, n, d.Snapshot.CPUQuota, d.Snapshot.CPUQuotaCgroup)
	case restore:
		runtime.SetDefaultGOMAXPROCS()
		return true, fmt.Sprintf("GOMAXPROCS handed back to the Go runtime (was %d, now %d): no tighter limit above the leaf cgroup", cur, runtime.GOMAXPROCS(0))
	}
	return false, fmt.Sprintf("GOMAXPROCS %d left to the Go runtime: no tighter CPU limit above the leaf cgroup", cur)
}

type gomaxprocsAction int

const (
	keep gomaxprocsAction = iota
	lower
	restore
)

// runtimeProcs is the Go runtime's GOMAXPROCS for a quota (0 = none) and
// an affinity count (runtime/cgroup_linux.go adjustCgroupGOMAXPROCS).
func runtimeProcs(quota float64, cpus int) int {
	if quota <= 0 {
		return cpus
	}
	return min(cpus, max(2, int(math.Ceil(quota))))
}

// planGOMAXPROCS decides what AdjustGOMAXPROCS does, without side effects.
func planGOMAXPROCS(leafQuota, walkQuota float64, cpus, cur int) (gomaxprocsAction, int) {
	if cpus <= 0 {
		return keep, cur
	}
	leaf, walk := runtimeProcs(leafQuota, cpus), runtimeProcs(walkQuota, cpus)
	switch {
	case walk < leaf:
		if cur > walk {
			return lower, walk
		}
	case cur < leaf:
		return restore, leaf
	}
	return keep, cur
}
