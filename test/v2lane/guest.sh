#!/bin/bash
# Runs inside the v2 lane's VM as its init (after init.sh's switch_root):
# mounts cgroup2, runs every test binary listed in $OUT/$LIST alone
# in a cgroup of its own, then the scenarios binary, and writes each
# one's output and exit status under $OUT, the 9p share the host reads.
# Powers the VM off at the end, whatever happened.
OUT=/v2lane-out
trap 'sync; echo o >/proc/sysrq-trigger; sleep 5' EXIT
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
mount -t tmpfs -o size=1g tmpfs /tmp
mount -t tmpfs tmpfs /run
# Tests serve /metrics on 127.0.0.1: the VM has no other network.
ip link set lo up 2>/dev/null || busybox ip link set lo up
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs tmpfs /dev/shm
# shellcheck disable=SC1091
. "$OUT/lane.env" # BOOT LIST SKIP REPO BIN RUN COUNT TIMEOUT RATION_TEST_TIMESCALE V2LANE_STRESS_REPS V2LANE_STRESS_RATION
export PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
export RATION_TEST_PREBUILT=$BIN RATION_TEST_TIMESCALE V2LANE_BIN=$BIN V2LANE_REPO=$REPO V2LANE_STRESS_REPS V2LANE_STRESS_RATION V2LANE_OUT=$OUT
cg=/sys/fs/cgroup
{
	uname -r
	nproc
	cat $cg/cgroup.controllers
} >"$OUT/guest.txt"
echo "+cpu +cpuset +memory +pids +hugetlb" >$cg/cgroup.subtree_control

# one NAME DIR PATTERN BINARY runs BINARY from DIR as the only process of
# a fresh child of the root, with -test.run PATTERN (or $RUN when set) and
# -test.skip $SKIP.
one() {
	local name=$1 dir=$2 pattern=$3 binary=$4 d=$cg/lane-$1
	mkdir -p "$d"
	local start=$SECONDS
	(cd "$dir" && sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$d" \
		"$binary" -test.v -test.count="${COUNT:-1}" -test.timeout="$TIMEOUT" -test.run "${RUN:-$pattern}" -test.skip "$SKIP") \
		>"$OUT/test-$name.txt" 2>&1
	echo "$?" >"$OUT/rc-$name"
	echo "$name $((SECONDS - start))s rc $(cat "$OUT/rc-$name")" >>"$OUT/progress.txt"
	# A test left something behind: kill it so the next binary runs alone.
	[ -e "$d/cgroup.kill" ] && echo 1 >"$d/cgroup.kill"
	find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
}

while IFS=$'\t' read -r name dir pattern binary; do
	[ -n "$name" ] && one "$name" "$dir" "$pattern" "$binary"
done <"$OUT/$LIST"
echo done >"$OUT/finished-$BOOT"
