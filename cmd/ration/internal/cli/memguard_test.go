package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/runner"
)

// podSampler returns a Sampler of a copy of the cgroup v2 snapshot
// cgroup/testdata/v2 (ration in system.slice/app.service, whose memory.max
// is 512 MiB), with memory.oom.group written on ration's cgroup when
// oomGroup is not "".
func podSampler(t *testing.T, oomGroup string) *memory.Sampler {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "..", "..", "..", "cgroup", "testdata", "v2"))); err != nil {
		t.Fatal(err)
	}
	if oomGroup != "" {
		f := filepath.Join(root, "sys", "fs", "cgroup", "system.slice", "app.service", "memory.oom.group")
		if err := os.WriteFile(f, []byte(oomGroup+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := memory.NewSampler(cgroup.Reader{Root: root})
	if err != nil || !s.Limited() {
		t.Fatalf("NewSampler: %v, limited %v", err, s != nil && s.Limited())
	}
	return s
}

// TestOOMProtection: which defence ration run uses against the kernel's
// OOM killer, as `ration limits` reports it: the jobs' cgroup where it can
// make one; else the memory guard where an OOM kill is a group kill
// (memory.oom.group) or RATION_MEM_GUARD=1 asks for it; else the jobs'
// raised oom_score_adj; none without a limit, or where RATION_MEM_GUARD=0
// leaves a group kill to take ration.
func TestOOMProtection(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == MemoryGuardEnv {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name       string
		oomGroup   string // "": no file; "none": no limit
		jobsCgroup bool
		guardEnv   string
		want       string
		groupKill  bool
		note       string
	}{
		{"no limit", "none", false, "", DefenceNone, false, "no memory limit"},
		{"pod: group kill, read-only cgroupfs", "1", false, "", DefenceGuard, true, "memory.oom.group is set at "},
		{"writable cgroupfs: the jobs' cgroup", "1", true, "", DefenceJobsCgroup, true, "stay in their own memory cgroup"},
		{"no group kill", "0", false, "", DefenceOOMScoreAdj, false, "oom_score_adj raised by 500"},
		{"cgroup v1 or an old kernel", "", false, "", DefenceOOMScoreAdj, false, "oom_score_adj"},
		{"guard asked for", "0", false, "1", DefenceGuard, false, "ration stops the largest job"},
		{"guard turned off with a group kill", "1", false, "0", DefenceNone, true, "RATION_MEM_GUARD=0 turns ration's memory guard off"},
	} {
		var s *memory.Sampler
		if tc.oomGroup != "none" {
			s = podSampler(t, tc.oomGroup)
		}
		o := OOMProtection(s, tc.jobsCgroup, env(tc.guardEnv))
		if o.Defence != tc.want || o.GroupKill != tc.groupKill || !strings.Contains(o.Note, tc.note) {
			t.Errorf("%s: %+v; want defence %s, group kill %v, a note with %q", tc.name, o, tc.want, tc.groupKill, tc.note)
		}
		if (o.Defence == DefenceGuard) != (o.GuardMarginBytes > 0) {
			t.Errorf("%s: guard margin %d with defence %s", tc.name, o.GuardMarginBytes, o.Defence)
		}
		if plan := OOMProtectionPlan(o); !strings.Contains(plan, "defence: "+tc.want) {
			t.Errorf("%s: ration limits says %q", tc.name, plan)
		}
	}
}

// TestGuardAdmission: with the guard, the memory admission keeps at least
// the guard's margin free (a 16th of 512 MiB: 6.25% > the admission's 5%),
// or it would start jobs that the guard then stops; a larger margin asked
// for stays, and without a guard nothing changes.
func TestGuardAdmission(t *testing.T) {
	s := podSampler(t, "1")
	g, err := memory.NewGuard(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		guard  *memory.Guard
		margin float64
		want   float64
	}{
		{"guard", g, 0, 1.0 / 16},
		{"guard, a larger margin asked for", g, 0.1, 0.1},
		{"no guard", nil, 0, 0},
	} {
		cfg := &runner.Config{Memory: s}
		cfg.Admit.Margin = tc.margin
		GuardAdmission(cfg, tc.guard)
		if cfg.Admit.Margin != tc.want {
			t.Errorf("%s: admission margin %v; want %v", tc.name, cfg.Admit.Margin, tc.want)
		}
	}
}
