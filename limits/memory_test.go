package limits

import (
	"strings"
	"testing"

	"github.com/ration-run/ration/cgroup"
)

func TestMemoryBinding(t *testing.T) {
	pod := memLimit(host(2), 200*MiB)
	pod.MemoryUsage = 20 * MiB
	for _, tc := range []struct {
		name      string
		snap      cgroup.Snapshot
		jobs      string
		memPerJob int64
		want      string
	}{
		{"no limit", host(2), "", 0, "no memory limit: memory does not bind the jobs"},
		{"unknown per job", pod, "", 0, "per-job memory unknown: 4 jobs by CPU; 200 MiB limit, 180 MiB of it not in use now: "},
		{"unknown per job, -j", pod, "6", 0, "per-job memory unknown: 6 jobs by CPU; "},
		{"binds", pod, "", 85 * MiB, "binds: 2 of 4 jobs fit (0.9 x cgroup v1 memory limit 200 MiB at /mem-test / 85 MiB per job = 2.11)"},
		{"binds, N%", pod, "200%", 85 * MiB, "binds: 2 jobs fit (0.9 x "},
		{"does not bind, N%", pod, "100%", 85 * MiB, "does not bind: 2 jobs fit, the CPU policy allows 2 "},
		{"explicit", pod, "8", 85 * MiB, "would bind, but 8 jobs were asked for explicitly: 2 fit (0.9 x "},
		{"does not bind", pod, "", 10 * MiB, "does not bind: 18 jobs fit, the CPU policy allows 4 (0.9 x "},
		{"host memory", host(2), "", 1 * GiB, "binds: 3 of 4 jobs fit (0.9 x host memory 4 GiB (no cgroup memory limit) / 1 GiB per job = 3.60)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := DecideFrom(tc.snap, tc.jobs, tc.memPerJob)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.MemoryBinding(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("MemoryBinding() = %q, want prefix %q", got, tc.want)
			}
		})
	}
}
