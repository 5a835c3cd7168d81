#!/usr/bin/env bash
# A/B of the jobs' memory cgroup (package internal/jobcgroup) on this host,
# as root, from the repository root: N runs (default 40) of
# TestWorkerRealOOME2E/go beside two busy-looping shells, first with
# RATION_JOB_CGROUP=0 (jobs in ration's own cgroup, as before), then with
# the default. Without the group, ration itself is sometimes OOM-killed
# after its workers and the run is lost. Writes $OUT/ab-off.log,
# $OUT/ab-on.log and $OUT/summary.txt (default OUT=/tmp/oomab).
set -eu
out=${OUT:-/tmp/oomab}
mkdir -p "$out"
go test -c -o "$out/cmd-ration.test" ./cmd/ration/internal/runcmd
: >"$out/summary.txt"
for mode in off on; do
	timeout 900 sh -c 'while :; do :; done' &
	h1=$!
	timeout 900 sh -c 'while :; do :; done' &
	h2=$!
	if [ "$mode" = off ]; then export RATION_JOB_CGROUP=0; else unset RATION_JOB_CGROUP; fi
	(cd cmd/ration/internal/runcmd && "$out/cmd-ration.test" -test.run 'TestWorkerRealOOME2E/go' -test.count="${N:-40}" -test.v) >"$out/ab-$mode.log" 2>&1 || true
	kill "$h1" "$h2" 2>/dev/null || true
	echo "RATION_JOB_CGROUP $mode: $(grep -c -- '--- PASS: TestWorkerRealOOME2E/go' "$out/ab-$mode.log") passed, $(grep -c -- '--- FAIL: TestWorkerRealOOME2E/go' "$out/ab-$mode.log") failed" | tee -a "$out/summary.txt"
done
