package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ration-run/ration/limits"
	"github.com/spf13/pflag"
)

// cmdLimits implements `ration limits [--json] [--fs-root DIR] [-j N|N%]
// [--mem-per-job SIZE]`: it prints the CPU and memory budget it found and
// the number of jobs `ration run` would start with the same flags.
func cmdLimits(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("ration limits", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print the decision as JSON")
	root := fs.String("fs-root", "", "read proc/ and the cgroup files below `DIR` (a snapshot) instead of the live system")
	jobs := fs.StringP("jobs", "j", "", "number of jobs: `N`, or N% of the effective CPUs (default: RATION_JOBS, then 2 per CPU, at most 8)")
	var memPerJob sizeFlag
	fs.Var(&memPerJob, "mem-per-job", "expected memory of one job, `SIZE` like 512M, 100MiB, 1GiB; caps jobs at 0.9 x memory limit / SIZE")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, err)
	}
	if *help {
		fmt.Fprintln(stdout, "usage: ration limits [--json] [--fs-root DIR] [-j N|N%] [--mem-per-job SIZE]")
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, "Show the CPU and memory budget of this container and the jobs it allows.")
		fmt.Fprintln(stdout)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	if fs.NArg() > 0 {
		return usageError(stderr, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if *root != "" {
		if st, err := os.Stat(*root); err != nil || !st.IsDir() {
			return usageError(stderr, fmt.Errorf("--fs-root %s: not a directory", *root))
		}
	}
	if err := limits.CheckJobs(*jobs); err != nil {
		return usageError(stderr, fmt.Errorf("-j: %w", err))
	}
	d, err := limits.Decide(limits.Options{FSRoot: *root, Jobs: *jobs, MemPerJob: int64(memPerJob)})
	if err != nil {
		return usageError(stderr, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // the reason says "<"
		if err := enc.Encode(d); err != nil {
			fmt.Fprintln(stderr, "ration limits:", err)
			return exitUsage
		}
		return 0
	}
	writeDecision(stdout, d)
	return 0
}

// usageError prints err as one line and returns the usage exit status.
func usageError(stderr io.Writer, err error) int {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintf(stderr, "ration limits: %s\n", msg)
	return exitUsage
}

// writeDecision prints the inputs one per line, then the decision.
func writeDecision(w io.Writer, d limits.Decision) {
	s := d.Snapshot
	line := func(k, format string, a ...any) { fmt.Fprintf(w, "%-16s %s\n", k+":", fmt.Sprintf(format, a...)) }
	if d.FSRoot != "" {
		line("fs root", "%s", d.FSRoot)
	}
	switch {
	case d.CgroupVersion == nil:
		line("cgroup", "none found")
	case d.Hybrid:
		line("cgroup", "v%d (hybrid: cpu v%d, memory v%d)", *d.CgroupVersion, s.CPUVersion, s.MemoryVersion)
	default:
		line("cgroup", "v%d", *d.CgroupVersion)
	}
	if s.CPUDir != "" {
		line("cpu cgroup", "%s (%s)", s.CPUCgroup, s.CPUDir)
	}
	if d.CPUQuota != nil {
		line("cpu quota", "%.2f CPUs (%d/%d us) at %s (%s)", *d.CPUQuota, d.CPUQuotaUs, d.CPUPeriodUs, d.CPUQuotaCgroup, d.CPUQuotaFile)
		if d.LeafCPUQuota == nil || *d.LeafCPUQuota != *d.CPUQuota {
			leaf := "unlimited"
			if d.LeafCPUQuota != nil {
				leaf = fmt.Sprintf("%.2f CPUs", *d.LeafCPUQuota)
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
	line("effective cpus", "%.2f", d.EffectiveCPUs)
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
	if d.MemPerJobBytes > 0 {
		line("mem per job", "%s", limits.FormatSize(d.MemPerJobBytes))
	}
	line("jobs", "%d (%s, decided by %s)", d.Jobs, d.JobsSource, d.DecidedBy)
	line("reason", "%s", d.Reason)
	for _, x := range d.Warnings {
		fmt.Fprintln(w, "warning:", x)
	}
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
