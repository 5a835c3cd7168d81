// Package memory owns ration's memory policy, for process jobs (package
// runner) and workers (package runner/worker) alike, each rule in one
// place:
//
//   - admission: whether the memory the jobs share has room for one more
//     job before it starts ([Gate]);
//   - the OOM rules: which failed attempt counts as OOM-killed
//     ([Attribute], [Tracker]), whether it runs again ([OOMRetry]), how the
//     concurrency drops in reaction ([HalveAfterOOM], [OOMHalves]), and
//     the wait of a re-run for room, which holds new work back meanwhile
//     ([Reruns]);
//   - how many jobs of a known size fit in a memory limit ([JobsFit],
//     [Headroom]: --mem-per-job, given to package limits or learnt by
//     package adapt);
//   - the free memory and GNU parallel's --memfree rule on it ([Free],
//     [FreeGate]);
//   - the oom_score_adj that makes the kernel take a child rather than
//     ration ([Victims]);
//   - the guard that stops a job before the kernel's OOM killer fires on a
//     cgroup ration shares with its jobs ([Guard]).
//
// Apart from the waiting (Reruns) and the watching (Guard), the rules hold
// policy only: the caller reads the memory cgroup (through this package's
// [Sampler] over package cgroup), the jobs' resident memory and their
// exits, and passes them in, so every rule is a table test; the mechanics
// (a pool's size, its queues, its processes) stay with the caller. It
// imports the standard library, x/sys/unix (the guard's raw reads and its
// timer) and package cgroup only, and must not import runner,
// runner/worker, pool, limits or adapt: they all call it (TestImports).
//
// # Admission
//
// The CPU policy (min(2 x quota, 8), or -j, lowered by OOM halvings) stays
// the upper bound: the runner asks only while fewer jobs than that run, and
// memory can only lower the number. [Gate.Admit] says Start when:
//
//  1. no job runs: a job always starts alone, even one that cannot fit; it
//     is then OOM-killed alone and reported (rule 3 of OOM kills, below);
//
//  2. otherwise, the cgroup's PSI "some avg10" (v2 memory.pressure) is not
//     above Config.PressureHold: tasks already stall on memory reclaim, the
//     early sign of an OOM kill, so no job is added until it eases;
//
//  3. there is no memory limit (or it could not be read): nothing to check;
//
//  4. before the first job has ended with a known peak (slow start, like
//     TCP's): fewer jobs run than the window, which starts at 1 and doubles
//     each time Config.Settle passes with the window full and the working
//     set under Config.SlowStart of the usable memory; and
//
//  5. one more job fits:
//
//     usable - (working set - running jobs' RSS) >= (running + 1) x one job's peak
//
//     where usable is the limit less Config.Margin of it, the working set is
//     the kernel's (usage minus inactive_file: page cache the kernel drops
//     first does not count) and one job's peak is the estimate below. So
//     what is not a job's memory stays where it is, and every job, running
//     or new, counts at its peak: one still growing keeps its share. A job
//     whose RSS is unknown (0) counts twice, in the working set and at its
//     peak, which errs on the safe side.
//
// One job's peak is estimated from the finished jobs' peak RSS (the
// maximum while fewer than Config.MinSamples are known, then the p95 of the
// latest 1024) and the running jobs' current RSS, whichever is largest. So
// a job is never started into an OOM that the estimate can foresee, and a
// job that is still growing keeps its share reserved.
//
// Memory is the binding limit when it allows fewer jobs than the CPU policy;
// [Decision.MemoryJobs] says how many it allows (memory for jobs divided by
// one job's peak, at least 1), and [Stats.String] says it for the run's
// summary: "memory bound 3 of 8 jobs: 180 MiB headroom / 60 MiB per job".
//
// # OOM kills
//
//  1. Attribution ([Attribute]): an attempt that failed (any non-zero exit
//     or signal: SIGKILL itself, or 137 = 128+9 from a shell whose child was
//     SIGKILLed, or whatever a wrapper makes of it) while the memory cgroup's
//     oom_kill counter rose during its run, and whose process group has no
//     members left, counts as OOM-killed. An attempt the runner stopped
//     itself (timeout, drain) never does. The kernel does not say which
//     process it killed, so when other jobs ran while the counter rose they
//     are named as candidates, and each of them that fails is attributed in
//     the same way: a job that failed for its own reason during another's
//     OOM kill may be taken for OOM-killed; that costs it one re-queue
//     (rule 2), never its result.
//  2. Re-queue ([OOMRetry]): an OOM-killed job is queued again and does not
//     count against --retries; the run's concurrency is halved
//     ([HalveAfterOOM]; unless no other job ran: fewer jobs would not have
//     saved it, nor when the attempt started before the last halving, which
//     answered it already: [OOMHalves]), and the job starts again only when
//     the jobs running besides it are fewer than both the new size and half
//     of those that ran at the kill ([OOMRetry.Below], [OOMRetry.Ready]),
//     and [Gate.Admit] says Start. While it waits for that ([Reruns.Wait]),
//     no new job starts, so that the number running really drops. A
//     halving never kills running jobs.
//  3. It fails as OOM-killed once it was killed while no other job ran (it
//     cannot fit alone), or after Config.OOMAttempts kills (3 by default),
//     whichever comes first. When it cannot fit alone, the peaks its
//     killed attempts taught the Gate are forgotten ([Gate.Forget]): no
//     job like it can run, and as one job's peak they would make every
//     other job start alone.
//
// # Free memory
//
// [Free] is the free memory --memfree compares: MemAvailable, and at most
// the headroom of ration's memory cgroup (its limit less its working set).
// [FreeGate] is the rule on it, as GNU parallel's: a job starts only while
// more than --memfree is free, and below half of it the youngest running
// job is stopped and queued again.
//
// # Concurrency
//
// A Gate is safe for concurrent use, never calls out while holding its lock
// (it calls nothing at all but Config.Now), and reads the time only through
// Config.Now. A [Reruns] is guarded by its owner's lock, as a [sync.Cond],
// so that its counts and the owner's count of jobs in flight change
// together.
package memory
