package limits

import "fmt"

// MemoryBinding says in one line whether memory, rather than CPU, bounds
// the number of jobs of d, and by how much, for `ration limits`:
//
//	binds: 2 of 4 jobs fit (0.9 x cgroup v1 memory limit 200 MiB at /pod / 85 MiB per job = 2.11)
//	does not bind: 10 jobs fit, the CPU policy allows 4 (0.9 x ...)
//	per-job memory unknown: 4 jobs by CPU; 200 MiB limit, 180 MiB of it not in use now: ration run starts a job only while one more fits, learning each job's peak from finished jobs
//	no memory limit: memory does not bind the jobs
//
// With a per-job size (--mem-per-job) the arithmetic is the policy's
// (Decision.MemoryMaxJobs); without one, what binds is decided while jobs
// run (the run's summary says it), and the line gives what is known now.
func (d Decision) MemoryBinding() string { return d.memoryBinding("") }

// MemoryBindingAdmissionOff is MemoryBinding for a ration run whose memory
// admission is turned off (offBy says by what, as
// "RATION_MEM_ADMISSION=0"): without a per-job size, jobs then start as
// the CPU policy allows, and only OOM kills lower their number.
func (d Decision) MemoryBindingAdmissionOff(offBy string) string { return d.memoryBinding(offBy) }

func (d Decision) memoryBinding(admissionOffBy string) string {
	cpu := d.Jobs // -j N: the upper bound that memory admission may lower
	if d.JobsSource == "default" {
		cpu = cpuPolicy(effectiveCPUs(d.Snapshot)).n
	}
	if d.MemoryMaxJobs != nil {
		fit, why := *d.MemoryMaxJobs, memoryCap(d.Snapshot, d.MemPerJobBytes).why
		switch {
		case d.DecidedBy == "memory" && d.JobsSource == "default":
			return fmt.Sprintf("binds: %d of %d jobs fit (%s)", fit, cpu, why)
		case d.DecidedBy == "memory":
			return fmt.Sprintf("binds: %d jobs fit (%s)", fit, why)
		case d.DecidedBy == "explicit" && fit < d.Jobs:
			return fmt.Sprintf("would bind, but %d jobs were asked for explicitly: %d fit (%s)", d.Jobs, fit, why)
		}
		return fmt.Sprintf("does not bind: %d jobs fit, the CPU policy allows %d (%s)", fit, d.Jobs, why)
	}
	if d.MemoryLimitBytes == nil {
		return "no memory limit: memory does not bind the jobs"
	}
	limit := *d.MemoryLimitBytes
	if admissionOffBy != "" {
		return fmt.Sprintf("per-job memory unknown: %d jobs by CPU; %s limit; %s turns ration run's memory admission off: "+
			"jobs start as the CPU policy allows, and only OOM kills lower their number", cpu, FormatSize(limit), admissionOffBy)
	}
	free := max(limit-d.MemoryUsageBytes, 0)
	return fmt.Sprintf("per-job memory unknown: %d jobs by CPU; %s limit, %s of it not in use now: "+
		"ration run starts a job only while one more fits, learning each job's peak from finished jobs",
		cpu, FormatSize(limit), FormatSize(free))
}
