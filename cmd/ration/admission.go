package main

import (
	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/runner/admit"
)

// memorySampler returns the reader of ration's own memory cgroup for the
// runner's memory admission (runner.Config.Memory), nil when there is no
// memory limit to respect, the cgroup cannot be read, or the limits come
// from a snapshot (--fs-root): then jobs start as the CPU policy allows.
func memorySampler(fsRoot string) *admit.Sampler {
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
