package limitscmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
	"github.com/ration-run/ration/limits"
)

// limitsFlags are the flags of `ration limits` as the user gave them.
type limitsFlags struct {
	help      bool
	json      bool
	fsRoot    string
	jobs      string
	memPerJob memFlag
	args      []string
}

// parseLimitsFlags parses the arguments of `ration limits`; the FlagSet
// prints the help.
func parseLimitsFlags(args []string) (limitsFlags, *pflag.FlagSet, error) {
	var f limitsFlags
	fs := pflag.NewFlagSet("ration limits", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.json, "json", false, "print the decision as JSON")
	fs.StringVar(&f.fsRoot, "fs-root", "", "read proc/ and the cgroup files below `DIR` (a snapshot) instead of the live system")
	fs.StringVarP(&f.jobs, "jobs", "j", "", "number of jobs: `N`, N% of the effective CPUs, +N/-N (the effective CPUs plus/minus N), or a FILE holding one (default: RATION_JOBS, then 2 per CPU, at most 8)")
	fs.Var(&f.memPerJob, "mem-per-job", "expected memory of one job, `SIZE` like 512M, 100MiB, 1GiB; caps jobs at 0.9 x memory limit / SIZE; auto (ration run learns it from finished jobs) caps nothing here")
	fs.BoolVarP(&f.help, "help", "h", false, "show this help")
	err := fs.Parse(args)
	f.args = fs.Args()
	return f, fs, err
}

// Flags returns the flags of `ration limits` (for shell completion).
func Flags() *pflag.FlagSet {
	_, fs, _ := parseLimitsFlags(nil)
	return fs
}

// planLimits checks the flags and the environment (read through getenv
// only) and returns the options of the decision, or one usage error. It
// does no I/O: whether --fs-root exists is checked when deciding.
func planLimits(f limitsFlags, getenv func(string) string) (limits.Options, error) {
	if len(f.args) > 0 {
		return limits.Options{}, flagMsg("", fmt.Sprintf("unexpected argument %q", f.args[0]))
	}
	if f.jobs == "0" {
		f.jobs = jobsZero // as ration run takes GNU's -j 0
	}
	if _, err := checkJobs(f.jobs, getenv); err != nil {
		return limits.Options{}, err
	}
	// As ration run: a -j -N that leaves no job slot is refused.
	return limits.Options{FSRoot: f.fsRoot, Jobs: f.jobs, Getenv: getenv, MemPerJob: int64(f.memPerJob.Size), RefuseNoSlot: true}, nil
}

// Main implements `ration limits [--json] [--fs-root DIR]
// [-j N|N%|+N|-N|FILE] [--mem-per-job SIZE|auto]`: it prints the CPU and
// memory budget it found and the number of jobs `ration run` would start
// with the same flags.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return limitsMain(args, os.Getenv, stdout, stderr)
}

// limitsMain is Main with the environment read through getenv.
func limitsMain(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	f, fs, err := parseLimitsFlags(args)
	if err != nil {
		return fail(stderr, "ration limits", err)
	}
	if f.help {
		fmt.Fprintln(stdout, "usage: ration limits [--json] [--fs-root DIR] [-j N|N%|+N|-N|FILE] [--mem-per-job SIZE|auto]")
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, "Show the CPU and memory budget of this container and the jobs it allows.")
		fmt.Fprintln(stdout)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	if isJobsFile(f.jobs) {
		// As ration run: GNU parallel's -j FILE, whose value counts.
		if f.jobs, err = readJobsFile(f.jobs); err != nil {
			return fail(stderr, "ration limits", err)
		}
	}
	opts, err := planLimits(f, getenv)
	if err == nil {
		err = checkFSRoot(opts.FSRoot)
	}
	if err != nil {
		return fail(stderr, "ration limits", err)
	}
	zero := strings.TrimSpace(f.jobs) == "0"
	d, err := limits.Decide(opts)
	if err != nil {
		return fail(stderr, "ration limits", err)
	}
	if zero {
		d.Reason = jobsZeroReason(d.Reason)
	}
	var procs *gomaxprocsJSON
	var jobsCg *jobsCgroupJSON // what ration run would do for its jobs; not for a snapshot
	var oomProt *cli.OOMProtectionJSON
	if d.FSRoot == "" {
		jobsCg = jobCgroupJSON(d.Snapshot, getenv)
		prot := cli.OOMProtection(cli.OwnMemorySampler(), jobsCg.None == "", getenv)
		oomProt = &prot
		// What ration run does with the same limits (runcmd's wire.go, decide):
		// done to this process, which runs where ration run would.
		_, note := limits.AdjustGOMAXPROCS(d)
		procs = &gomaxprocsJSON{N: runtime.GOMAXPROCS(0), Note: note}
	}
	if !f.json {
		writeDecision(stdout, d, f.memPerJob.Auto, procs, jobsCg, oomProt, memoryBinding(d, getenv))
		return 0
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // the reason says "<"
	out := struct {
		limits.Decision
		*gomaxprocsJSON
		JobsCgroup    *jobsCgroupJSON        `json:"jobs_cgroup,omitempty"`
		OOMProtection *cli.OOMProtectionJSON `json:"oom_protection,omitempty"`
	}{Decision: d, gomaxprocsJSON: procs, JobsCgroup: jobsCg, OOMProtection: oomProt}
	if err := enc.Encode(out); err != nil {
		return fail(stderr, "ration limits", err)
	}
	return 0
}

// gomaxprocsJSON is the GOMAXPROCS ration runs with (after
// limits.AdjustGOMAXPROCS) and why; absent for an --fs-root snapshot.
type gomaxprocsJSON struct {
	N    int    `json:"gomaxprocs"`
	Note string `json:"gomaxprocs_note"`
}

// writeDecision prints the inputs one per line, then the decision;
// memAuto is --mem-per-job auto, procs the GOMAXPROCS, jobsCg the jobs'
// cgroup and prot the OOM protection (nil: not shown), binding the memory
// binding line.
func writeDecision(w io.Writer, d limits.Decision, memAuto bool, procs *gomaxprocsJSON, jobsCg *jobsCgroupJSON, prot *cli.OOMProtectionJSON, binding string) {
	s := d.Snapshot
	line := func(k, format string, a ...any) { fmt.Fprintf(w, "%-16s %s\n", k+":", fmt.Sprintf(format, a...)) }
	if d.FSRoot != "" {
		line("fs root", "%s", d.FSRoot)
	}
	switch {
	case d.CgroupVersion == nil:
		line("cgroup", "none found")
	case d.Hybrid:
		line("cgroup", "v%d (hybrid: %s, %s)", *d.CgroupVersion, controllerVersion("cpu", s.CPUVersion), controllerVersion("memory", s.MemoryVersion))
	default:
		line("cgroup", "v%d", *d.CgroupVersion)
	}
	if s.CPUDir != "" {
		line("cpu cgroup", "%s (%s)", s.CPUCgroup, s.CPUDir)
	}
	if d.AncestorsHidden {
		line("above", "hidden: this cgroup is the root of a cgroup namespace, so limits above it (a pod-level limit) cannot be read; pass one in with -j or RATION_JOBS (from the downward API)")
	}
	if d.CPUQuota != nil {
		line("cpu quota", "%s CPUs (%d/%d us) at %s (%s)", limits.FormatCPUs(*d.CPUQuota), d.CPUQuotaUs, d.CPUPeriodUs, d.CPUQuotaCgroup, d.CPUQuotaFile)
		if d.LeafCPUQuota == nil || *d.LeafCPUQuota != *d.CPUQuota {
			leaf := "unlimited"
			if d.LeafCPUQuota != nil {
				leaf = limits.FormatCPUs(*d.LeafCPUQuota) + " CPUs"
			}
			line("leaf cpu quota", "%s (what the Go runtime sees)", leaf)
		}
	} else {
		line("cpu quota", "unlimited")
	}
	if d.CPUSetCPUs != nil {
		line("cpuset", "%s (%d CPUs) from %s", d.CPUSetList, *d.CPUSetCPUs, s.CPUSetFile)
	} else {
		line("cpuset", "unknown")
	}
	line("affinity", "%d CPUs (%s)", d.AffinityCPUs, s.AffinitySource)
	line("host cpus", "%d (%s)", d.HostCPUs, s.HostCPUsSource)
	line("effective cpus", "%s", limits.FormatCPUs(d.EffectiveCPUs))
	if procs != nil {
		line("gomaxprocs", "%d (%s)", procs.N, procs.Note)
	}
	if s.NrPeriods > 0 || s.NrThrottled > 0 {
		line("cpu throttled", "%d of %d periods, %s", s.NrThrottled, s.NrPeriods, s.ThrottledTime)
	}
	if s.MemoryDir != "" {
		line("memory cgroup", "%s (%s)", s.MemoryCgroup, s.MemoryDir)
	}
	if d.MemoryLimitBytes != nil {
		line("memory limit", "%s (%d bytes) at %s", limits.FormatSize(*d.MemoryLimitBytes), *d.MemoryLimitBytes, d.MemoryLimitCgroup)
	} else {
		line("memory limit", "unlimited")
	}
	if d.MemoryHighBytes != nil {
		line("memory high", "%s", limits.FormatSize(*d.MemoryHighBytes))
	}
	if s.MemoryDir != "" {
		usage := limits.FormatSize(s.MemoryUsage)
		if s.MemoryPeak > 0 {
			usage += ", peak " + limits.FormatSize(s.MemoryPeak)
		}
		line("memory usage", "%s", usage)
		line("oom kills", "%d", s.OOMKills)
	}
	if d.HostMemoryBytes > 0 {
		line("host memory", "%s", limits.FormatSize(d.HostMemoryBytes))
	}
	switch {
	case d.MemPerJobBytes > 0:
		line("mem per job", "%s", limits.FormatSize(d.MemPerJobBytes))
	case memAuto:
		line("mem per job", "auto: ration run learns it from the peak RSS of finished jobs")
	}
	line("memory binding", "%s", binding)
	if jobsCg != nil {
		line("jobs' cgroup", "%s", jobCgroupPlan(jobsCg))
	}
	if prot != nil {
		line("oom protection", "%s", cli.OOMProtectionPlan(*prot))
	}
	line("jobs", "%d (%s, decided by %s)", d.Jobs, d.JobsSource, d.DecidedBy)
	line("reason", "%s", d.Reason)
	for _, x := range d.Warnings {
		fmt.Fprintln(w, "warning:", x)
	}
}

// controllerVersion is "cpu v1", or "no cpu controller" when none of the
// mounted hierarchies has it (version 0).
func controllerVersion(name string, version int) string {
	if version == 0 {
		return "no " + name + " controller"
	}
	return fmt.Sprintf("%s v%d", name, version)
}
