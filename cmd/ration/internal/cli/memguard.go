package cli

import (
	"cmp"
	"fmt"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner"
)

// MemoryGuardEnv turns ration's memory guard (memory.Guard) on when set
// to 1, true, on or yes, and off when set to 0, false, off or no. Unset,
// the guard runs where the jobs share ration's memory cgroup (no jobs'
// cgroup) and an OOM kill there is a group kill (memory.oom.group), which
// would take ration with every job.
const MemoryGuardEnv = "RATION_MEM_GUARD"

// The defences of OOMProtectionJSON.Defence.
const (
	DefenceJobsCgroup  = "jobs_cgroup"
	DefenceGuard       = "memory_guard"
	DefenceOOMScoreAdj = "oom_score_adj"
	DefenceNone        = "none"
)

// OOMProtectionJSON is the "oom_protection" object of `ration limits
// --json`: whether an OOM kill of one job can take ration (a group kill),
// and how ration run protects itself from the kernel's OOM killer.
type OOMProtectionJSON struct {
	GroupKill        bool   `json:"group_kill"`
	GroupKillAt      string `json:"group_kill_at,omitempty"`
	Defence          string `json:"defence"`
	GuardMarginBytes int64  `json:"guard_margin_bytes,omitempty"`
	Note             string `json:"note"`
}

// OOMProtection says how ration run protects itself from the kernel's OOM
// killer with the memory cgroup s reads (ration's own; nil: no memory
// limit), jobsCgroup telling whether the jobs get a memory cgroup of
// their own, and the environment read through getenv (RATION_MEM_GUARD).
func OOMProtection(s *memory.Sampler, jobsCgroup bool, getenv func(string) string) OOMProtectionJSON {
	if s == nil {
		return OOMProtectionJSON{Defence: DefenceNone, Note: "no memory limit: no OOM kill to pre-empt"}
	}
	var o OOMProtectionJSON
	o.GroupKill, o.GroupKillAt = memory.GroupKill(s)
	groupKill := ""
	if o.GroupKill {
		groupKill = fmt.Sprintf("memory.oom.group is set at %s: a kernel OOM kill there takes every process of the cgroup, ration and every job", o.GroupKillAt)
	}
	var limit int64
	if rd, _, err := s.Sample(); err == nil {
		limit = rd.Limit
	}
	switch {
	case jobsCgroup:
		o.Defence, o.Note = DefenceJobsCgroup, "the jobs' OOM kills stay in their own memory cgroup, below ration's"
	case EnvOff(getenv, MemoryGuardEnv) && o.GroupKill:
		o.Defence, o.Note = DefenceNone, groupKill+"; "+MemoryGuardEnv+"="+getenv(MemoryGuardEnv)+" turns ration's memory guard off"
	case EnvOn(getenv, MemoryGuardEnv) || (o.GroupKill && !EnvOff(getenv, MemoryGuardEnv)):
		o.Defence, o.GuardMarginBytes = DefenceGuard, memory.GuardMargin(limit)
		o.Note = fmt.Sprintf("ration stops the largest job when the memory it cannot reclaim comes within %s of the limit, before the kernel's OOM killer fires; ration run starts the jobs (or the --worker workers) 10 nicer than itself unless --nice sets it, so that the guard is not kept waiting for a CPU",
			limits.FormatSize(o.GuardMarginBytes))
		if o.GroupKill {
			o.Note = groupKill + "; " + o.Note
		}
	default:
		o.Defence, o.Note = DefenceOOMScoreAdj, fmt.Sprintf("the kernel's OOM killer takes a job (its oom_score_adj raised by %d), not ration", memory.ScoreAdj)
	}
	return o
}

// OwnMemorySampler returns the reader of ration's own memory cgroup, nil
// when it has no memory limit or cannot be read.
func OwnMemorySampler() *memory.Sampler {
	s, err := memory.NewSampler(cgroup.Reader{})
	if err != nil || !s.Limited() {
		return nil
	}
	if _, _, err := s.Sample(); err != nil {
		return nil
	}
	return s
}

// OOMProtectionPlan says, for `ration limits`, whether a group kill can
// take ration and which defence ration run uses (o, from OOMProtection).
func OOMProtectionPlan(o OOMProtectionJSON) string {
	kill := "no group kill"
	if o.GroupKill {
		kill = "a group kill can take ration"
	}
	return fmt.Sprintf("%s; defence: %s (%s)", kill, o.Defence, o.Note)
}

// GuardAdmission keeps the memory admission below the guard's line (g
// nil: no guard): its margin is at least the guard's share of the limit,
// or the admission would start jobs that the guard then stops.
func GuardAdmission(cfg *runner.Config, g *memory.Guard) {
	if g == nil || cfg.Memory == nil {
		return
	}
	rd, _, err := cfg.Memory.Sample()
	if err != nil || rd.Limit <= 0 {
		return
	}
	share := float64(memory.GuardMargin(rd.Limit)) / float64(rd.Limit)
	cfg.Admit.Margin = max(cmp.Or(cfg.Admit.Margin, memory.DefaultMargin), share)
}
