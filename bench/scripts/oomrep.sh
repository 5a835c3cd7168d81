#!/usr/bin/env bash
# Repeats the OOM tests of cmd/ration (internal/runcmd) on a cgroup v2 host (see v2host.sh),
# each run alone in a fresh cgroup, and keeps the test output and dmesg of
# each failure under $OUT (default /tmp/oomrep):
#
#   bench/scripts/v2host.sh build            here
#   N=25 bench/scripts/oomrep.sh             there, as root, from the repository root
#
# RUN picks the tests (default TestWorkerRealOOME2E and
# TestJobMemoryCannotKillRationE2E). RATION_JOB_CGROUP=0 in the environment
# reaches ration and runs its jobs in its own cgroup, as before the jobs'
# cgroup (package internal/jobcgroup): the A of an A/B.
set -u
root=$PWD
bin=/tmp/v2host-bin
out=${OUT:-/tmp/oomrep}
mkdir -p "$out" "$bin"
[ -x "$bin/ration" ] || tar -xzf devbin/v2host.tgz -C "$bin"
cg=/sys/fs/cgroup
mkdir -p $cg/v2host-shell
echo $$ >$cg/v2host-shell/cgroup.procs
echo "+cpu +cpuset +memory" >$cg/cgroup.subtree_control
mkdir -p $cg/oomrep
echo "+cpu +cpuset +memory" >$cg/oomrep/cgroup.subtree_control
dmesg -C 2>/dev/null
pass=0 fail=0
for i in $(seq "${N:-25}"); do
	d=$cg/oomrep/r$i
	mkdir "$d"
	if (cd "$root/cmd/ration/internal/runcmd" && RATION_TEST_PREBUILT=$bin sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$d" "$bin/tests/cmd-ration-internal-runcmd.test" -test.run "${RUN:-TestWorkerRealOOME2E|TestJobMemoryCannotKillRationE2E}" -test.count=1 -test.v) >"$out/run$i.txt" 2>&1; then
		pass=$((pass + 1))
		rm "$out/run$i.txt"
	else
		fail=$((fail + 1))
		dmesg >"$out/dmesg$i.txt" 2>&1
	fi
	dmesg -C 2>/dev/null
	rmdir "$d"/*/ "$d" 2>/dev/null
done
rmdir $cg/oomrep 2>/dev/null
echo "${RUN:-TestWorkerRealOOME2E|TestJobMemoryCannotKillRationE2E} on v2 (RATION_JOB_CGROUP=${RATION_JOB_CGROUP:-}): $pass passed, $fail failed" | tee "$out/summary.txt"
