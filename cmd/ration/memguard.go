package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner"
)

// memoryGuardEnv turns ration's memory guard (memory.Guard) on when set
// to 1, true, on or yes, and off when set to 0, false, off or no. Unset,
// the guard runs where the jobs share ration's memory cgroup (no jobs'
// cgroup) and an OOM kill there is a group kill (memory.oom.group), which
// would take ration with every job.
const memoryGuardEnv = "RATION_MEM_GUARD"

// envOn reports whether the environment variable name (read through
// getenv, os.Getenv when nil) turns something on: 1, true, on or yes.
func envOn(getenv func(string) string, name string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch strings.ToLower(strings.TrimSpace(getenv(name))) {
	case "1", "true", "on", "yes":
		return true
	}
	return false
}

// The defences of oomProtectionJSON.Defence.
const (
	defenceJobsCgroup  = "jobs_cgroup"
	defenceGuard       = "memory_guard"
	defenceOOMScoreAdj = "oom_score_adj"
	defenceNone        = "none"
)

// oomProtectionJSON is the "oom_protection" object of `ration limits
// --json`: whether an OOM kill of one job can take ration (a group kill),
// and how ration run protects itself from the kernel's OOM killer.
type oomProtectionJSON struct {
	GroupKill        bool   `json:"group_kill"`
	GroupKillAt      string `json:"group_kill_at,omitempty"`
	Defence          string `json:"defence"`
	GuardMarginBytes int64  `json:"guard_margin_bytes,omitempty"`
	Note             string `json:"note"`
}

// oomProtection says how ration run protects itself from the kernel's OOM
// killer with the memory cgroup s reads (ration's own; nil: no memory
// limit), jobsCgroup telling whether the jobs get a memory cgroup of
// their own, and the environment read through getenv (RATION_MEM_GUARD).
func oomProtection(s *memory.Sampler, jobsCgroup bool, getenv func(string) string) oomProtectionJSON {
	if s == nil {
		return oomProtectionJSON{Defence: defenceNone, Note: "no memory limit: no OOM kill to pre-empt"}
	}
	var o oomProtectionJSON
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
		o.Defence, o.Note = defenceJobsCgroup, "the jobs' OOM kills stay in their own memory cgroup, below ration's"
	case envOff(getenv, memoryGuardEnv) && o.GroupKill:
		o.Defence, o.Note = defenceNone, groupKill+"; "+memoryGuardEnv+"="+getenv(memoryGuardEnv)+" turns ration's memory guard off"
	case envOn(getenv, memoryGuardEnv) || (o.GroupKill && !envOff(getenv, memoryGuardEnv)):
		o.Defence, o.GuardMarginBytes = defenceGuard, memory.GuardMargin(limit)
		o.Note = fmt.Sprintf("ration stops the largest job when the memory it cannot reclaim comes within %s of the limit, before the kernel's OOM killer fires",
			limits.FormatSize(o.GuardMarginBytes))
		if o.GroupKill {
			o.Note = groupKill + "; " + o.Note
		}
	default:
		o.Defence, o.Note = defenceOOMScoreAdj, fmt.Sprintf("the kernel's OOM killer takes a job (its oom_score_adj raised by %d), not ration", memory.ScoreAdj)
	}
	return o
}

// ownMemorySampler returns the reader of ration's own memory cgroup, nil
// when it has no memory limit or cannot be read.
func ownMemorySampler() *memory.Sampler {
	s, err := memory.NewSampler(cgroup.Reader{})
	if err != nil || !s.Limited() {
		return nil
	}
	if _, _, err := s.Sample(); err != nil {
		return nil
	}
	return s
}

// guardRun is a running memory guard.
type guardRun struct {
	g    *memory.Guard
	done chan struct{} // closed when Run returned
	end  context.CancelFunc
}

// get returns the guard; nil for a nil r (none runs).
func (r *guardRun) get() *memory.Guard {
	if r == nil {
		return nil
	}
	return r.g
}

// stop stops the guard and waits for it; a nil r does nothing.
func (r *guardRun) stop() {
	if r == nil {
		return
	}
	r.end()
	<-r.done
}

// startMemoryGuard starts ration's memory guard where oomProtection says
// it is the defence (the jobs share ration's cgroup: w.jobs is nil), nil
// otherwise.
func (w *wiring) startMemoryGuard() *guardRun {
	p := w.plan
	if w.jobs != nil || p.limits.FSRoot != "" || p.cfg.DryRun {
		return nil
	}
	s := ownMemorySampler()
	o := oomProtection(s, false, p.limits.Getenv)
	if o.Defence != defenceGuard {
		w.log.Debug("no memory guard", "event", "memory_guard", "defence", o.Defence, "why", o.Note)
		return nil
	}
	g, err := memory.NewGuard(s, w.log)
	if err != nil {
		w.log.Warn("no memory guard", "event", "memory_guard", "err", err)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &guardRun{g: g, done: make(chan struct{}), end: cancel}
	go func() {
		defer close(r.done)
		if err := g.Run(ctx); err != nil {
			w.log.Warn("memory guard stopped", "event", "memory_guard", "err", err)
		}
	}()
	w.log.Debug("memory guard", "event", "memory_guard", "why", o.Note)
	return r
}

// oomProtectionPlan says, for `ration limits`, whether a group kill can
// take ration and which defence ration run uses (o, from oomProtection).
func oomProtectionPlan(o oomProtectionJSON) string {
	kill := "no group kill"
	if o.GroupKill {
		kill = "a group kill can take ration"
	}
	return fmt.Sprintf("%s; defence: %s (%s)", kill, o.Defence, o.Note)
}

// guardAdmission keeps the memory admission below the guard's line (g
// nil: no guard): its margin is at least the guard's share of the limit,
// or the admission would start jobs that the guard then stops.
func guardAdmission(cfg *runner.Config, g *memory.Guard) {
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
