package cli

import (
	"os"
	"strings"

	"github.com/ration-run/ration/internal/jobcgroup"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/limits"
)

// MemoryAdmissionEnv turns the memory admission off when set to 0, false
// or off: jobs then start as the CPU policy allows, and only OOM kills
// (halving) adapt the run to memory.
const MemoryAdmissionEnv = "RATION_MEM_ADMISSION"

// EnvOff reports whether the environment variable name (read through
// getenv, os.Getenv when nil) turns something off: 0, false, off or no.
func EnvOff(getenv func(string) string, name string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch strings.ToLower(strings.TrimSpace(getenv(name))) {
	case "0", "false", "off", "no":
		return true
	}
	return false
}

// MemoryBinding is the "memory binding" line of ration limits for d, as
// ration run would behave in the environment read through getenv.
func MemoryBinding(d limits.Decision, getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if EnvOff(getenv, MemoryAdmissionEnv) {
		return d.MemoryBindingAdmissionOff(MemoryAdmissionEnv + "=" + getenv(MemoryAdmissionEnv))
	}
	return d.MemoryBinding()
}

// MemorySampler returns the reader of the memory cgroup the jobs run in
// for the runner's memory admission (runner.Config.Memory): the jobs'
// cgroup jobs, whose own limit is the one they must fit in, or else
// ration's own. It is nil when there is no memory limit to respect, the
// cgroup cannot be read, the limits come from a snapshot (--fs-root), or
// RATION_MEM_ADMISSION turns it off: then jobs start as the CPU policy
// allows.
func MemorySampler(fsRoot string, getenv func(string) string, jobs *jobcgroup.Group) *memory.Sampler {
	if EnvOff(getenv, MemoryAdmissionEnv) || fsRoot != "" {
		return nil
	}
	if jobs != nil {
		return memory.SamplerFor(jobs.Dir, jobs.Version)
	}
	return OwnMemorySampler()
}
