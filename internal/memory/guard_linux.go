package memory

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/ration-run/ration/cgroup"
)

// guardGrace is how long the guard waits for a stopped group's memory to
// be freed before it stops another: the kernel frees a killed process's
// memory as it exits, within milliseconds, and a second stop meanwhile
// would take a job that fits.
const guardGrace = 200 * time.Millisecond

// Run guards the cgroup until ctx ends. It returns an error at once when
// the cgroup's charge cannot be read; later read errors wait for the next
// reading.
func (g *Guard) Run(ctx context.Context) error {
	usageName, limitName := "memory.usage_in_bytes", "memory.limit_in_bytes"
	if g.version == 2 {
		usageName, limitName = "memory.current", "memory.max"
	}
	usage, err := openCountFile(filepath.Join(g.dir, usageName))
	if err != nil {
		return fmt.Errorf("memory guard: %w", err)
	}
	defer usage.Close()
	if _, err := usage.Read(); err != nil {
		return fmt.Errorf("memory guard: %w", err)
	}
	limitFile, err := openCountFile(filepath.Join(g.dir, limitName))
	if err != nil {
		return fmt.Errorf("memory guard: %w", err)
	}
	defer limitFile.Close()
	t, err := newGuardTimer()
	if err != nil {
		return fmt.Errorf("memory guard: %w", err)
	}
	defer t.Close()
	defer context.AfterFunc(ctx, func() { t.Close() })()
	var events *eventsWatch
	if g.version == 2 {
		// At the limit the kernel counts "max" before its OOM killer can
		// fire: a reading the scheduler made late is then made at once.
		if events, err = watchEvents(filepath.Join(g.dir, "memory.events"), t.Poke); err != nil {
			g.log.Debug("memory guard: memory.events not watched", "err", err)
		} else {
			defer events.Close()
		}
	}
	var limit int64
	var limitAt time.Time
	held := guardHold{}
	// How late the readings came: one later than the margin takes to fill
	// leaves the kernel to act first (a busy machine's scheduler).
	var readings int
	var due time.Time
	var late time.Duration
	for d := time.Duration(0); ; {
		if err := t.Sleep(d); err != nil || ctx.Err() != nil {
			var notified int64
			if events != nil {
				notified = events.Wakes()
			}
			g.log.Debug("memory guard ended", "event", "memory_guard", "readings", readings, "notified", notified, "stops", g.kills.Load(), "most_late", late)
			if ctx.Err() != nil { // the timer closed by ctx's end
				return nil
			}
			return fmt.Errorf("memory guard: %w", err)
		}
		now := time.Now()
		readings++
		if !due.IsZero() {
			late = max(late, now.Sub(due))
		}
		if now.Sub(limitAt) >= time.Second { // a resized pod is seen
			if l, err := limitFile.ReadLimit(); err == nil {
				limit = l
			}
			limitAt = now
		}
		used, err := usage.Read()
		if err != nil || limit <= 0 {
			d = guardMaxInterval
			due = now.Add(d)
			continue
		}
		if line := limit - GuardMargin(limit); used > line {
			var past bool
			if used, past = g.pastLine(used, line); past {
				g.stop(now, limit, held, func() (int64, bool) {
					u, err := usage.Read()
					if err != nil {
						return 0, false
					}
					return g.pastLine(u, line)
				})
			}
		}
		d = guardInterval(limit, used)
		due = now.Add(d)
	}
}

// pastLine returns the charge used less what reclaim would free before
// any OOM kill (fileLRU) when used is past line, and whether that is
// still past it.
func (g *Guard) pastLine(used, line int64) (int64, bool) {
	if used <= line {
		return used, false
	}
	used = max(used-g.fileLRU(), 0)
	return used, used > line
}

// fileLRU returns the page cache on the file LRUs of the cgroup (active
// and inactive), which reclaim frees before the OOM killer fires; 0 when
// memory.stat cannot be read.
func (g *Guard) fileLRU() int64 {
	b, err := os.ReadFile(filepath.Join(g.dir, "memory.stat"))
	if err != nil {
		return 0
	}
	active, inactive := []byte("active_file "), []byte("inactive_file ")
	if g.version == 1 {
		active, inactive = []byte("total_active_file "), []byte("total_inactive_file ")
	}
	var n int64
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		for _, k := range [][]byte{active, inactive} {
			if v, ok := bytes.CutPrefix(line, k); ok {
				if c, err := strconv.ParseInt(string(v), 10, 64); err == nil {
					n += c
				}
			}
		}
	}
	return n
}

// guardHold is what keeps the guard from stopping a job while memory is
// already on its way back: the processes being killed (procState.killed),
// by its own stop or by anyone else (the kernel's OOM killer, when the
// guard came late), each with when the guard first saw it so. A process
// stays in its cgroup's listing until its memory is freed (the kernel
// moves it out in cgroup_exit, after exit_mm), so one no longer listed as
// killed is forgotten.
type guardHold map[int]time.Time // by process ID

// wait records the processes killed, as listed now, and reports whether
// one of them was first seen killed within guardGrace. A process stuck
// killed for longer no longer holds the guard back, so that it cannot
// disable the guard.
func (h guardHold) wait(now time.Time, killed map[int]bool) bool {
	wait := false
	for pid := range killed {
		if _, ok := h[pid]; !ok {
			h[pid] = now
		}
	}
	for pid, at := range h {
		if !killed[pid] {
			delete(h, pid)
		} else if now.Sub(at) < guardGrace {
			wait = true
		}
	}
	return wait
}

// stop SIGKILLs the largest process group of ration's children (see
// pickVictim) unless memory is already on its way back (guardHold.wait)
// or past, read again once the jobs are listed, says the charge is no
// longer past the guard's line: the reading that called stop may predate
// a job's exit (a killed job that became a zombie, its memory freed,
// between the reading and the listing, which then skips it).
func (g *Guard) stop(now time.Time, limit int64, held guardHold, past func() (used int64, ok bool)) {
	pids, err := cgroup.Procs(g.leaf)
	if err != nil {
		g.log.Warn("memory guard: cannot list the jobs", "err", err)
		return
	}
	selfPgrp := syscall.Getpgrp()
	rss := map[int]int64{}
	members := map[int][]int{} // process IDs by group
	children := map[int]bool{} // groups led or joined by a child of ration
	killed := map[int]bool{}
	page := int64(os.Getpagesize())
	for _, pid := range pids {
		if pid == g.self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(g.proc, strconv.Itoa(pid), "stat"))
		if err != nil {
			continue // exited
		}
		st, err := parseProcState(string(b))
		if err != nil || st.state == 'Z' || st.state == 'X' || st.pgrp == selfPgrp {
			continue
		}
		if st.killed() {
			killed[pid] = true
			continue
		}
		rss[st.pgrp] += st.rssPages * page
		members[st.pgrp] = append(members[st.pgrp], pid)
		if st.ppid == g.self {
			children[st.pgrp] = true
		}
	}
	if held.wait(now, killed) {
		return
	}
	var groups []jobGroup
	for pg := range children {
		// A group with no resident memory frees none.
		if rss[pg] > 0 {
			groups = append(groups, jobGroup{pgid: pg, rss: rss[pg]})
		}
	}
	pgid, ok := pickVictim(groups)
	if !ok {
		return
	}
	used, ok := past()
	if !ok {
		return
	}
	g.kills.Add(1) // before the kill: the job's end must see it
	err = syscall.Kill(-pgid, syscall.SIGKILL)
	if err != nil {
		g.kills.Add(-1) // gone meanwhile: no job's end is this kill's
	}
	for _, pid := range members[pgid] {
		held[pid] = now
	}
	g.log.Warn("memory guard: stopped the largest job before the kernel's OOM killer could take ration with it",
		"event", "memory_guard", "pgid", pgid, "rss", rss[pgid], "used", used, "limit", limit, "margin", GuardMargin(limit), "err", err)
}
