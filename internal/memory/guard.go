package memory

import (
	"cmp"
	"slices"
	"time"
)

// The guard's margin below the memory limit, and how fast it assumes
// memory can grow between two of its readings. A thread that touches a
// fresh allocation grows by one to two GiB a second (a Python
// bytearray(300<<20) or a C memset of a malloc'ed block: 1.7 to 1.9 GiB/s
// here, about 1 GiB/s in the v2 lane's emulated guest), so the guard
// assumes two such threads and reads the cgroup as often as that rate
// could take it from where it is to half the margin, and no less often
// than every guardMaxInterval.
const (
	guardMinMargin   = 16 << 20
	guardMaxMargin   = 256 << 20
	guardGrowth      = 4 << 30 // bytes a second
	guardMinInterval = 2 * time.Millisecond
	guardMaxInterval = 100 * time.Millisecond
)

// GuardMargin is how far below the memory limit the guard stops a job:
// a 16th of the limit, at least 16 MiB and at most 256 MiB. It is the
// memory a job that fits alone must leave unused (with ration's own); it
// must cover what the jobs allocate between the guard's reading and the
// stopped job's memory being freed, the guard's wake-up late by a few
// milliseconds on a busy machine included (a job touching fresh memory at
// 1.3 GiB/s, a Python bytearray here, overshot an 8 MiB margin in 1 of
// about 200 stops under a load average of 15 on 2 CPUs).
func GuardMargin(limit int64) int64 {
	return min(max(limit/16, guardMinMargin), guardMaxMargin)
}

// guardInterval is how long the guard may wait before reading the cgroup
// again when used of limit is charged and cannot be reclaimed: the time
// memory growing at guardGrowth takes to come within half the margin of
// the limit, within guardMinInterval and guardMaxInterval. So growth at
// guardGrowth is stopped with at least half the margin left for the
// guard's wake-up coming late, the stop and the freeing (2 ms of such
// growth at the smallest margin), and growth at half that rate, a thread
// touching memory, with at least three quarters of it. Reading as often
// as the whole margin would call for takes 340 readings a second instead
// of 190 held 12 MiB below the line of a 200 MiB pod (1.3% of one CPU
// instead of about 1% on a virtual machine), and the cgroup v1 stress
// (bench/scripts/memguard.sh) kept 0 kernel OOM kills without it.
func guardInterval(limit, used int64) time.Duration {
	room := limit - GuardMargin(limit)/2 - used
	if room <= 0 {
		return guardMinInterval
	}
	d := time.Duration(float64(room) / guardGrowth * float64(time.Second))
	return min(max(d, guardMinInterval), guardMaxInterval)
}

// jobGroup is one process group whose memory the guard weighs: a job's,
// or a worker's (each leads its own group).
type jobGroup struct {
	pgid int
	rss  int64 // bytes, the members' resident memory summed
}

// pickVictim returns the process group the guard stops: the one with the
// most resident memory, as the kernel's OOM killer picks the largest
// process, so that the job growing past what fits is the one stopped
// (it then follows the OOM rules: re-queued beside fewer jobs, failed
// when it ran alone). Ties go to the higher process group ID, the younger
// job. ok is false when there is none.
func pickVictim(groups []jobGroup) (pgid int, ok bool) {
	if len(groups) == 0 {
		return 0, false
	}
	v := slices.MaxFunc(groups, func(a, b jobGroup) int {
		if c := cmp.Compare(a.rss, b.rss); c != 0 {
			return c
		}
		return cmp.Compare(a.pgid, b.pgid)
	})
	return v.pgid, true
}
