// Package cgroup reads the kernel's view of the CPU and memory budget of a
// process: its cgroups (v1, v2 or hybrid), the CPU quota and cpuset, the
// memory limit and usage, OOM kills and CPU throttling, and the CPU
// affinity and host size they are measured against. It reads kernel files
// and does nothing else: the policy built on it lives in package limits.
//
// # Finding the cgroups
//
// /proc/PID/cgroup names the process's cgroup in each hierarchy;
// /proc/PID/mountinfo says where each hierarchy is mounted. A v1 hierarchy
// is matched by its controller name in the mount's super options; the v2
// hierarchy is the "0::" line and the cgroup2 mount, and serves a
// controller only when no v1 hierarchy has it (hybrid systems) and, when
// the mount root's cgroup.controllers is readable, it lists the controller.
// Mount paths are octal-unescaped (\040 is a space). When a hierarchy is
// mounted several times the mount whose root is the longest prefix of the
// process's path wins. A mount whose root is not "/" (a container's view
// of the host's /docker/ID) is handled by stripping the root from the
// path. In a cgroup namespace whose hierarchies were mounted outside it
// (unshare -C, a sandbox that keeps the host's /sys) the process's path
// reads "/" and the mount's root "/../..": the levels in between have no
// names there, so the directories that deep below the mount point are
// listed and the one whose cgroup.procs holds the process is taken (in a
// snapshot, the only one there is). A path that still cannot be located
// ("/../sibling" below a mount made inside the namespace, which the kernel
// writes when the process was moved out of it) falls back to the mount
// point itself, and a warning says so. In both cases
// Snapshot.CPUOutsideNamespace is set for the CPU hierarchy: the Go
// runtime, which takes only a mount whose root is a prefix of the path,
// finds no cgroup then, and no CPU quota.
//
// # Tightest limit
//
// The CPU quota and the memory limits are read at every level from the
// process's cgroup up to the mount root, and the tightest one wins, with
// the cgroup path and file that set it. A parent's limit binds its
// children, and the Go runtime (which reads the leaf only) misses it.
// A limit above the mount root (a container's view of v1 mounts its own
// cgroup as the root) is visible only on v1, through the leaf's
// hierarchical_memory_limit, which counts too.
// The leaf's quota alone is kept as Snapshot.LeafCPUQuota for comparison.
//
// # Robustness
//
// Every file that is malformed, truncated or unreadable becomes a line in
// Snapshot.Warnings naming the file and the problem, and that input is
// ignored (treated as "no limit at this level"). Files that do not exist
// are normal (the root cgroup has no cpu.max) and are not reported. No
// input makes this package panic; the parsers are fuzzed.
//
// # Re-reading
//
// Every Read parses /proc/PID/cgroup and mountinfo again and opens every
// file afresh, so a changed limit or a process moved to another cgroup is
// seen by the next Read. Nothing is cached and Reader has no mutable
// state, so it is safe for concurrent use.
//
// # Linux only
//
// Cgroups, /proc and sched_getaffinity(2) exist only on Linux, so only
// there does a live Read (Root "" or "/") read anything: the affinity
// syscall (golang.org/x/sys/unix) and the containerd/cgroups call below
// sit in files built for Linux alone. On every other OS the package
// builds, and a live Read or ReadProcess reads no file: it returns a
// Snapshot with Version 0, the host CPU count of runtime.NumCPU() as both
// HostCPUs and AffinityCPUs, no memory numbers, NoCgroups saying "no
// cgroups on GOOS", and no error, since "no cgroup limits" is then the
// truth rather than a failure. Reading a snapshot tree (Root set) is
// plain file parsing and works the same on every OS, so a tree copied
// from a broken pod can be examined on a laptop.
//
// # containerd/cgroups
//
// github.com/containerd/cgroups/v3 is used for [cgroups.Mode] only: on the
// live system it stat()s /sys/fs/cgroup independently of mountinfo, and a
// disagreement with our mountinfo reading becomes a warning. Everything
// else is our own small parsers, because the library's cgroup1 and cgroup2
// packages cannot be pointed at another filesystem root (fixtures,
// --fs-root), do not walk up the hierarchy for the tightest limit, do not
// handle the namespace and mount-root cases above, and would pull
// runtime-spec, protobuf, logrus, dbus and ebpf into a small binary. For
// the same reason the real-cgroup tests create and remove their child
// cgroups with plain mkdir and rmdir rather than cgroup1.New.
//
// It imports no other package of this module (the standard library,
// containerd/cgroups and x/sys only): the rest of ration reads the kernel's
// budget through it.
package cgroup
