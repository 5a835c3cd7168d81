// Package limits decides how many jobs ration runs at once, and says why.
//
// [Decide] returns the whole [Decision]; [Jobs] is the one call for a
// process that needs only the count and its reason, such as a service
// sizing an in-process pool (package pool imports the standard library
// only, so it cannot read cgroups: pool.New(n) with Jobs' n).
//
// # Policy
//
// The effective CPU count is the smallest of the process's scheduler
// affinity (sched_getaffinity, or Cpus_allowed_list of a snapshot), its
// cpuset size, and its CPU quota (quota / period, the tightest over the
// cgroup hierarchy; see package cgroup). It is fractional: a 1.5-CPU quota
// gives 1.5.
//
//   - Default: jobs = max(1, min(floor(2 x effective CPUs), 8)). Two jobs
//     per CPU keep a CPU busy while its other job waits on I/O; 8 keeps a
//     big host from starting dozens of memory-hungry jobs by default.
//   - -j N, or RATION_JOBS=N when -j is not given: exactly N (N >= 1).
//   - -j N%, or RATION_JOBS=N%: floor(N/100 x effective CPUs), at least 1,
//     not capped at 8 (the user asked for a share of the CPUs).
//   - -j +N and -j -N (GNU parallel's), or RATION_JOBS=+N: floor(effective
//     CPUs) plus or minus N, not capped at 8. Fewer than one job is an
//     error with Options.RefuseNoSlot (ration run, as GNU parallel), else
//     1 job (ration sem; and a decision re-made during a run, so that a
//     shrinking container never stops it). Being the policy's own, the
//     reason explains it ("-j +2: 4 effective CPUs + 2 = 6") and a
//     re-decision counts from the CPUs it then finds.
//   - Memory: when a per-job size is given, jobs <= floor(0.9 x memory
//     limit / per-job size), never below 1 (a warning says when even one
//     job does not fit). The memory limit is the cgroup's; when the cgroup
//     has none, the host's MemTotal stands in, since it is the real bound.
//     The cap applies to the default, to N% and to +N/-N (all counted
//     from the CPUs). An explicit -j N (or RATION_JOBS=N) wins over it:
//     the user may know their jobs' real size better than the estimate; a
//     warning says how many would fit.
//
// Every Decision carries a Reason, one sentence naming every input and
// the one that decided, e.g.
//
//	jobs=1: cgroup v1 CPU quota 0.50 CPUs (50000/100000 us) at /ration-test < 2 host CPUs (affinity 2, cpuset 0-1); 2 x 0.50 = 1.00
//
// Inputs equal to the host CPU count are named in parentheses after it.
//
// Unreadable or malformed cgroup files never fail a decision: they become
// Warnings and the decision falls back to the CPU counts that remain
// (ultimately the host's). Only invalid input (Options.Jobs, RATION_JOBS,
// a negative per-job size, a refused +N/-N) is an error. Errors are plain
// and speak this package's terms ("RATION_JOBS: "x" is not a whole number
// >= 1, +N, -N or a percentage like 50%"); a command line that took the
// value from a flag adds the flag's name, and its exit status, itself.
//
// # Other operating systems
//
// Cgroups exist only on Linux (see package cgroup). Elsewhere the package
// builds and decides from the host's CPUs (runtime.NumCPU()) with no
// quota, cpuset or memory limit, and the reason says so: "jobs=8: 8 host
// CPUs, no cgroups on darwin; 2 x 8.00 = 16.00, capped at 8". The host's
// memory is not read there, so a per-job memory size caps nothing (a
// warning says so). AdjustGOMAXPROCS finds no hidden limit and does
// nothing.
//
// # Snapshots (--fs-root)
//
// With Options.FSRoot set, everything is read below that directory: the
// affinity from proc/self/status Cpus_allowed_list, the host CPU count
// from sys/devices/system/cpu/online (or, when absent, the affinity list;
// when both are absent, this machine's count with a warning), and host
// memory from proc/meminfo. AdjustGOMAXPROCS does nothing for such a
// Decision, since it does not describe this process.
//
// # GOMAXPROCS and automaxprocs
//
// ration does not link go.uber.org/automaxprocs. The module requires Go
// 1.26 (go.mod), and since Go 1.25 the runtime itself sets GOMAXPROCS from
// the cgroup CPU limit (rounded up, at least 2, never above the affinity
// count) and re-reads it about once a second. automaxprocs v1.6.0 would
// make things worse on such a runtime: it rounds down (1.5 CPUs -> 1) and
// ends with runtime.GOMAXPROCS(n), which switches the runtime's periodic
// updates off for good, so a later resize of the container would go
// unnoticed. A "//go:build !go1.25" file using it for older toolchains
// would be dead code: a toolchain older than the go.mod line cannot build
// this module, so it could never be compiled or tested.
//
// go.uber.org/automaxprocs stays a dependency of the tests only
// (TestAutomaxprocsAgrees, Linux): a child process placed in a cgroup with
// a known quota runs its maxprocs.Set; the quota automaxprocs reads must
// be the leaf quota package cgroup reads for that process, and for 1.5
// CPUs it must set GOMAXPROCS 1 as said above. `make tidy-check` fails if
// cmd/ration ever links it.
//
// What the runtime misses is the hierarchy: it reads only the leaf
// cgroup's quota and keeps the file descriptors of the cgroup it started
// in (golang/go#81180). It also misses the cgroup itself in a cgroup
// namespace whose hierarchy was mounted outside it (unshare -C, a sandbox
// that keeps the host's /sys): internal/runtime/cgroup takes only a mount
// whose root ("/../..") is a prefix of the process's path ("/"), finds
// none, and keeps GOMAXPROCS at the CPU count for good, while package
// cgroup finds the cgroup below the mount point
// (cgroup.Snapshot.CPUOutsideNamespace). AdjustGOMAXPROCS corrects
// exactly these cases: when our walk finds a tighter limit than the leaf
// quota the runtime sees (none in such a namespace), and it would give a
// smaller GOMAXPROCS by the runtime's own rounding, it lowers GOMAXPROCS
// (accepting that the runtime then stops updating; callers re-run it on
// every re-read of the limits). When the tighter limit disappears it calls
// runtime.SetDefaultGOMAXPROCS to hand control back to the runtime. It
// never raises GOMAXPROCS above the runtime's choice and leaves it alone
// when the GOMAXPROCS environment variable or GODEBUG=containermaxprocs=0
// is set.
//
// Of this module it imports package cgroup and internal/memory (whose rule
// the memory-per-job cap is) only; it must not import runner,
// pool or the command line's packages.
package limits
