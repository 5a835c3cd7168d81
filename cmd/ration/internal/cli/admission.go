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
	_, off := envSwitch(getenv, name)
	return off
}

// EnvOn reports whether the environment variable name (read through
// getenv, os.Getenv when nil) turns something on: 1, true, on or yes.
func EnvOn(getenv func(string) string, name string) bool {
	on, _ := envSwitch(getenv, name)
	return on
}

// envSwitch reads the environment variable name through getenv
// (os.Getenv when nil) as a switch: on for 1, true, on or yes, off for 0,
// false, off or no, in any case and with blanks around; neither when
// unset or anything else.
func envSwitch(getenv func(string) string, name string) (on, off bool) {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch strings.ToLower(strings.TrimSpace(getenv(name))) {
	case "1", "true", "on", "yes":
		return true, false
	case "0", "false", "off", "no":
		return false, true
	}
	return false, false
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
