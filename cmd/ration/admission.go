package main

import (
	"os"
	"strings"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/runner/admit"
)

// memoryAdmissionEnv turns the memory admission off when set to 0, false
// or off: jobs then start as the CPU policy allows, and only OOM kills
// (halving) adapt the run to memory.
const memoryAdmissionEnv = "RATION_MEM_ADMISSION"

// memorySampler returns the reader of ration's own memory cgroup for the
// runner's memory admission (runner.Config.Memory), nil when there is no
// memory limit to respect, the cgroup cannot be read, the limits come
// from a snapshot (--fs-root), or RATION_MEM_ADMISSION turns it off: then
// jobs start as the CPU policy allows.
func memorySampler(fsRoot string, getenv func(string) string) *admit.Sampler {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch strings.ToLower(strings.TrimSpace(getenv(memoryAdmissionEnv))) {
	case "0", "false", "off", "no":
		return nil
	}
	if fsRoot != "" {
		return nil
	}
	s, err := admit.NewSampler(cgroup.Reader{})
	if err != nil || !s.Limited() {
		return nil
	}
	if _, _, err := s.Sample(); err != nil {
		return nil
	}
	return s
}
