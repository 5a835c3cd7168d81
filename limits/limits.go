package limits

import (
	"context"
	"fmt"
	"os"

	"github.com/ration-run/ration/cgroup"
)

// Options are the inputs of Decide besides the kernel's.
type Options struct {
	// FSRoot is the filesystem root to read from; "" is the live system.
	FSRoot string
	// Jobs is the requested number of jobs (ration's -j): "", "N", "+N",
	// "-N" or "N%" (see CheckJobs). "" falls back to the RATION_JOBS
	// environment variable, then to the default policy.
	Jobs string
	// RefuseNoSlot makes a +N or -N request that leaves fewer than one
	// job an error, as GNU parallel's -j does (ration run, ration
	// limits); without it such a request runs 1 job (ration sem, and every
	// DecideFrom: a run whose CPUs shrink keeps going).
	RefuseNoSlot bool
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// MemPerJob is the expected memory of one job in bytes; 0 means no
	// memory cap. Negative is an error.
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
	// runtime sees, unless CPUOutsideNamespace), null when unlimited.
	LeafCPUQuota *float64 `json:"leaf_cpu_quota"`
	// CPUOutsideNamespace is set when the process's CPU cgroup lies
	// outside its cgroup namespace (cgroup.Snapshot.CPUOutsideNamespace):
	// the Go runtime then sees no CPU quota at all, and AdjustGOMAXPROCS
	// lowers GOMAXPROCS for it.
	CPUOutsideNamespace bool `json:"cpu_outside_namespace"`
	// AncestorsHidden is set when the cgroups above the process's
	// container cannot be read (cgroup.Snapshot.AncestorsHidden): a limit
	// there, such as a Kubernetes pod-level limit, is not seen, and only
	// -j or RATION_JOBS can pass it in.
	AncestorsHidden bool `json:"ancestors_hidden"`
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
	// JobsSource is "default", "-j" (Options.Jobs, which is ration's -j)
	// or "RATION_JOBS".
	JobsSource string `json:"jobs_source"`
	// DecidedBy names the input that decided: "cpu_quota", "cpuset",
	// "affinity", "host" (default policy, N%, +N or -N), "max" (the cap of 8),
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
// policy. The error is non-nil only for invalid input: an invalid
// opts.Jobs ("jobs: ..."), an invalid RATION_JOBS ("RATION_JOBS: ..."), a
// negative opts.MemPerJob, or with opts.RefuseNoSlot a +N or -N that
// leaves no job slot ("-j -4 leaves no job slot: 2 effective CPUs - 4 =
// -2", naming the request as the reason does); cgroup problems become
// Decision.Warnings.
func Decide(opts Options) (Decision, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	req, err := requestedJobs(opts.Jobs, getenv)
	if err != nil {
		return Decision{Warnings: []string{}}, err
	}
	if err := checkMemPerJob(opts.MemPerJob); err != nil {
		return Decision{Warnings: []string{}}, err
	}
	snap, _ := cgroup.Reader{Root: opts.FSRoot}.Read() // a read error is also in snap.Warnings
	d := decide(snap, req, opts.MemPerJob)
	if n, sum := relativeSum(d.EffectiveCPUs, req); opts.RefuseNoSlot && req.relative && n < 1 {
		return Decision{Warnings: []string{}}, fmt.Errorf("%s leaves no job slot: %s", req.flag(), sum)
	}
	d.FSRoot = opts.FSRoot
	if d.FSRoot == "/" {
		d.FSRoot = ""
	}
	return d, nil
}

// Jobs returns how many jobs this process should run at once, and why
// (Decision.Reason): Decide with the zero Options, that is RATION_JOBS when
// set, else the default policy over the container's CPU limits (the
// tightest quota of the cgroup hierarchy, the cpuset and the affinity).
// It is the size to give an in-process pool, which cannot read cgroups
// itself:
//
//	n, why, err := limits.Jobs(ctx)
//	if err != nil {
//		return err // an invalid RATION_JOBS
//	}
//	p := pool.New(n)
//
// err is non-nil only for an invalid RATION_JOBS ("RATION_JOBS: ...") or
// when ctx is done before the limits are read (ctx.Err()); jobs is then 0.
// Reading the kernel's files does not block, so ctx is checked only
// before. Unreadable cgroup files do not fail it: the decision falls back
// to the CPU counts that remain, as Decide's, whose Warnings say what
// was missing.
func Jobs(ctx context.Context) (jobs int, reason string, err error) {
	if err := ctx.Err(); err != nil {
		return 0, "", err
	}
	d, err := Decide(Options{})
	if err != nil {
		return 0, "", err
	}
	return d.Jobs, d.Reason, nil
}

// DecideFrom applies the policy to an existing Snapshot, e.g. one re-read
// during a run. jobs is as Options.Jobs ("", "N", "+N", "-N", "N%"), but
// unlike Decide it does not consult RATION_JOBS, and a +N or -N that
// leaves no job slot runs 1 job. The error is non-nil only for an
// invalid jobs value ("jobs: ...") or a negative memPerJob.
func DecideFrom(snap cgroup.Snapshot, jobs string, memPerJob int64) (Decision, error) {
	req, err := requestedJobs(jobs, func(string) string { return "" })
	if err != nil {
		return Decision{Warnings: []string{}}, err
	}
	if err := checkMemPerJob(memPerJob); err != nil {
		return Decision{Warnings: []string{}}, err
	}
	return decide(snap, req, memPerJob), nil
}

func checkMemPerJob(n int64) error {
	if n < 0 {
		return fmt.Errorf("negative memory per job %d", n)
	}
	return nil
}

// decide applies the policy to a reading: each step below is pure and
// tested on its own; this only wires them and fills the Decision.
func decide(s cgroup.Snapshot, req request, memPerJob int64) Decision {
	d := mirror(s, req.source, memPerJob)
	cpu := effectiveCPUs(s)
	d.EffectiveCPUs = cpu.value()
	mem := memoryCap(s, memPerJob)
	d.Warnings = append(d.Warnings, mem.warnings...)
	if mem.fit > 0 {
		d.MemoryMaxJobs = ptr(mem.fit)
	}
	def := mem.apply(cpuPolicy(cpu))
	d.DefaultJobs = def.n
	var c choice
	switch {
	case req.n > 0:
		c = explicit(req, def)
		if w := mem.exceeded(req); w != "" {
			d.Warnings = append(d.Warnings, w)
		}
	case req.percent > 0:
		c = mem.apply(percentPolicy(cpu, req))
	case req.relative:
		c = mem.apply(relativePolicy(cpu, req))
	default:
		c = def
	}
	d.Jobs, d.DecidedBy = c.n, c.by
	d.Reason = reason(c, cpu)
	return d
}

// mirror copies the reading into the Decision's JSON fields; pointers stay
// nil for what is unknown or unlimited.
func mirror(s cgroup.Snapshot, source string, memPerJob int64) Decision {
	d := Decision{
		Hybrid:              s.Hybrid,
		CPUCgroup:           s.CPUCgroup,
		AffinityCPUs:        s.AffinityCPUs,
		HostCPUs:            s.HostCPUs,
		MemoryCgroup:        s.MemoryCgroup,
		CPUOutsideNamespace: s.CPUOutsideNamespace,
		AncestorsHidden:     s.AncestorsHidden,
		MemoryUsageBytes:    s.MemoryUsage,
		HostMemoryBytes:     s.HostMemory,
		MemPerJobBytes:      memPerJob,
		JobsSource:          source,
		Warnings:            append([]string{}, s.Warnings...),
		Snapshot:            s,
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
		d.CPUSetList = formatCPUList(s.CPUSet)
	}
	if s.MemoryLimit > 0 {
		d.MemoryLimitBytes = ptr(s.MemoryLimit)
		d.MemoryLimitCgroup = s.MemoryLimitCgroup
	}
	if s.MemoryHigh > 0 {
		d.MemoryHighBytes = ptr(s.MemoryHigh)
	}
	return d
}

func ptr[T any](v T) *T { return &v }
