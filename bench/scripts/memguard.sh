#!/usr/bin/env bash
# memguard.sh: ration's memory guard where the jobs share ration's memory
# cgroup (RATION_JOB_CGROUP=0, as in a pod whose cgroupfs is read-only),
# on this host's cgroup (v1 or v2), as root:
#
#   bench/scripts/memguard.sh cpu [SECONDS]   ration's CPU time over an idle run
#       (one job holding 1 MiB) and one held next to the limit (160 MiB of
#       200), with the guard on and off (default 60 s each, run side by side)
#   bench/scripts/memguard.sh batch [RUNS]    ration's CPU time over a memory-bound
#       batch (40 jobs holding 70 MiB in 200 MiB, two fit at a time), the
#       guard on and off in turn, RUNS times (default 3); their difference
#       is the guard's
#   bench/scripts/memguard.sh stress [REPS]   REPS (default 5) runs of 200 jobs
#       of random sizes in 200 MiB, one in ten of 250 to 400 MiB allocated
#       at once (cannot fit), defaults otherwise; per run: exit, jobs done
#       and failed, joblog lines, the cgroup's oom_kill (on cgroup v2 with
#       memory.oom.group each would have been a group kill) and guard stops
#
# GUARD=0 runs the stress without the guard (the kernel's OOM killer acts);
# KEEP=DIR keeps each run's stderr and joblog there; RATION=PATH runs that
# ration binary instead of building this tree's (to measure two side by side).
# Cgroups are made below this shell's own and removed.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
keep=${KEEP:-}
trap 'rm -rf "$bin"' EXIT
if [ -n "${RATION:-}" ]; then cp "$RATION" "$bin/ration"; else go build -o "$bin/ration" ./cmd/ration; fi
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	v=2 own=/sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup | head -1)
	limitf=memory.max eventsf=memory.events
else
	v=1 own=/sys/fs/cgroup/memory$(grep ':memory:' /proc/self/cgroup | cut -d: -f3)
	limitf=memory.limit_in_bytes eventsf=memory.oom_control
fi

# newcg NAME: a cgroup of 200 MiB below ours; prints its directory.
newcg() {
	local cg=$own/memguard-$1-$$
	mkdir "$cg"
	echo $((200 << 20)) > "$cg/$limitf"
	[ $v = 2 ] && echo 0 > "$cg/memory.swap.max" 2>/dev/null || true
	echo "$cg"
}
oomkills() { awk '$1 == "oom_kill" {print $2}' "$1/$eventsf"; }

cpu() {
	local secs=${1:-60}
	one() { # name guard mib
		local cg pid t0 t1 st
		cg=$(newcg "$1-$2")
		(echo $BASHPID > "$cg/cgroup.procs"; RATION_JOB_CGROUP=0 RATION_MEM_GUARD=$2 exec "$bin/ration" run -j 1 --no-bar -- \
			python3 -c "import time; b=bytearray($3<<20); time.sleep($secs+3)" ::: 1 >/dev/null 2>&1) &
		pid=$!
		sleep 2
		read -r -a st < /proc/$pid/stat; t0=$((st[13] + st[14]))
		sleep "$secs"
		read -r -a st < /proc/$pid/stat; t1=$((st[13] + st[14]))
		wait $pid || true
		printf '%-28s ration CPU %5.2f s in %d s = %.2f%% of one CPU; oom_kill %s\n' "$1 (guard=$2, $3 MiB)" \
			"$(echo "($t1-$t0)/$(getconf CLK_TCK)" | bc -l)" "$secs" "$(echo "100*($t1-$t0)/$(getconf CLK_TCK)/$secs" | bc -l)" "$(oomkills "$cg")"
		rmdir "$cg"
	}
	one idle 0 1 & one idle 1 1 & one near-limit 0 160 & one near-limit 1 160 & wait
}

batch() {
	local runs=${1:-3}
	one() { # guard
		local cg pid t0 t1 st ticks=0 code
		cg=$(newcg "batch-$1")
		(echo $BASHPID > "$cg/cgroup.procs"; RATION_JOB_CGROUP=0 RATION_MEM_GUARD=$1 exec "$bin/ration" run --no-bar -- \
			python3 -c 'import time; b = bytearray(70 << 20); time.sleep(0.2)' ::: $(seq 40) >/dev/null 2>&1) &
		pid=$!
		t0=$(date +%s.%N)
		# ration's CPU time read until it exits: the last reading misses
		# at most the final 0.1 s.
		while { read -r -a st <"/proc/$pid/stat"; } 2>/dev/null && [ "${st[2]}" != Z ]; do
			ticks=$((st[13] + st[14]))
			sleep 0.1
		done
		code=0
		wait $pid || code=$?
		t1=$(date +%s.%N)
		printf 'batch (guard=%s): exit %d, wall %.1f s, ration CPU %.2f s = %.2f%% of one CPU; oom_kill %s\n' "$1" "$code" \
			"$(echo "$t1 - $t0" | bc -l)" "$(echo "$ticks / $(getconf CLK_TCK)" | bc -l)" \
			"$(echo "100 * $ticks / $(getconf CLK_TCK) / ($t1 - $t0)" | bc -l)" "$(oomkills "$cg")"
		rmdir "$cg"
	}
	for _ in $(seq "$runs"); do one 1; one 0; done
}

stress() {
	local reps=${1:-5} guard=${GUARD:-1}
	local prog=$bin/grow.py
	# Allocates argv[2] MiB at once (bytearray memsets it: resident in a
	# tenth of a second for 300 MiB), holds it, reports.
	printf '%s\n' 'import sys, time' 'b = bytearray(int(sys.argv[2]) << 20)' 'time.sleep(0.3)' 'print("done", sys.argv[1], flush=True)' > "$prog"
	for r in $(seq "$reps"); do
		local cg in jl out err code
		cg=$(newcg "stress$r") in=$bin/in$r jl=$bin/jl$r out=$bin/out$r err=$bin/err$r
		python3 -c "
import random
rnd = random.Random($r)
for i in range(1, 201):
    mib = rnd.randint(250, 400) if i % 10 == 0 else rnd.choice([rnd.randint(5, 60)] * 3 + [rnd.randint(60, 150)])
    print(i, mib)" > "$in"
		set +e
		(echo $BASHPID > "$cg/cgroup.procs"; RATION_JOB_CGROUP=0 RATION_MEM_GUARD=$guard exec "$bin/ration" run --no-bar --joblog "$jl" \
			--colsep ' ' -- python3 "$prog" {1} {2} < "$in" > "$out" 2> "$err")
		code=$?
		set -e
		printf 'run %d: exit %d, done %d, joblog %d lines (%d failed), oom_kill %s, guard stops %d\n' "$r" "$code" \
			"$(grep -c '^done' "$out")" "$(($(wc -l < "$jl") - 1))" "$(awk -F'\t' 'NR > 1 && ($7 != 0 || $8 != 0)' "$jl" | wc -l)" \
			"$(oomkills "$cg")" "$(grep -c 'memory guard: stopped' "$err" || true)"
		[ -z "$keep" ] || cp "$err" "$jl" "$keep/"
		rmdir "$cg"
	done
}

case ${1:-} in
cpu | batch | stress) "$@" ;;
*) sed -n 2,21p "$0" >&2; exit 2 ;;
esac
