#!/usr/bin/env bash
# Verifies ration on a real cgroup v2 host without a Go toolchain (issue 14:
# memory scenarios, `ration limits` under v2 quotas, the real-cgroup and OOM
# tests, the memory-bound pod; issue 15: the pool benchmark at that host's
# core count).
#
#   bench/scripts/v2host.sh build       here: static binaries and compiled
#                                        tests into devbin/ (git-ignored)
#   bench/scripts/v2host.sh limits      there, as root: ration limits under
#                                        v2 CPU, cpuset and memory limits
#   bench/scripts/v2host.sh tests       there: the compiled tests, each binary
#                                        alone in a cgroup of its own
#   bench/scripts/v2host.sh mempod      there: make bench's memory-bound pod
#   bench/scripts/v2host.sh pool [N]    there: bench/pool's benchmark, N rounds
#
# RUN and SKIP, when set, pass -test.run and -test.skip to every test
# binary of the tests step.
#
# "There" runs from the repository root with devbin/ beside it and writes
# its logs under $OUT (default /tmp/v2host). It moves its own shell into a
# leaf cgroup and enables cpu, cpuset and memory in the root's
# cgroup.subtree_control, as a delegated v2 host needs, and removes every
# cgroup it creates.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
# build packs the binaries into devbin/v2host.tgz (carry limit: 64 MiB);
# the other steps unpack it into $bin once.
bin=${V2HOST_BIN:-/tmp/v2host-bin}
out=${OUT:-/tmp/v2host}
if [ "${1:-}" != build ] && [ ! -x "$bin/ration" ]; then
	mkdir -p "$bin" && tar -xzf "$root/devbin/v2host.tgz" -C "$bin" || exit 1
fi
cg=/sys/fs/cgroup

build() {
	set -e
	export CGO_ENABLED=0
	bin=$(mktemp -d)
	mkdir -p "$bin/tests" "$bin/bench"
	local flags=(-trimpath -ldflags=-s\ -w)
	go build "${flags[@]}" -o "$bin/ration" ./cmd/ration
	go build "${flags[@]}" -o "$bin/goworker" ./runner/worker/examples/goworker
	for p in cgroup limits internal/memory internal/jobcgroup internal/pdeath runner/worker internal/workerexec cmd/ration cmd/ration/internal/limitscmd cmd/ration/internal/runcmd cmd/ration/internal/semcmd; do
		go test -c "${flags[@]}" -o "$bin/tests/${p//\//-}.test" "./$p"
	done
	# charts is a module of its own; its distributed-run test puts ration
	# shards in cgroups with CPU quotas.
	(cd charts && go test -c "${flags[@]}" -o "$bin/tests/charts.test" .)
	(cd bench && go build "${flags[@]}" -o "$bin/bench/scenario" ./scenario &&
		go build "${flags[@]}" -o "$bin/bench/burn" ./workers/burn &&
		go build "${flags[@]}" -o "$bin/bench/poolmap" ./scenario/poolmap &&
		go test -c "${flags[@]}" -o "$bin/bench/pool.test" ./pool)
	ln -s ../ration "$bin/bench/ration"
	mkdir -p devbin
	tar -czf devbin/v2host.tgz -C "$bin" .
	rm -rf "$bin"
	ls -l devbin/v2host.tgz
}

# setup puts this shell into a leaf and enables the controllers below the
# root, once.
setup() {
	if [ "$(stat -fc %T $cg)" != cgroup2fs ]; then
		echo "v2host: $cg is not a cgroup v2 mount" >&2
		exit 1
	fi
	mkdir -p "$out" $cg/v2host-shell
	echo $$ >$cg/v2host-shell/cgroup.procs
	echo "+cpu +cpuset +memory" >$cg/cgroup.subtree_control || echo "v2host: enabling controllers in $cg failed" >&2
	{ uname -r; nproc; cat $cg/cgroup.controllers $cg/cgroup.subtree_control; } >"$out/host.txt"
}

# inside DIR CMD... runs CMD as the only process of the cgroup DIR.
inside() {
	local dir=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$dir" "$@"
}

limits() {
	setup
	local log=$out/limits.txt
	: >"$log"
	# name, then cgroup files as FILE=VALUE
	while read -r name files; do
		local d=$cg/v2host-limits-$name
		mkdir "$d"
		for kv in $files; do
			[ "$kv" = - ] && continue
			# CASES writes a space as _ (cpu.max takes "QUOTA PERIOD").
			echo "${kv#*=}" | tr _ ' ' >"$d/${kv%%=*}" || echo "v2host: cannot write $kv in $d" >>"$log"
		done
		{
			echo "=== $name: ${files}"
			inside "$d" "$bin/ration" limits
			echo "--- exit $?"
		} >>"$log" 2>&1
		rmdir "$d"
	done <<-'CASES'
		none -
		quota-1.5 cpu.max=150000_100000
		quota-0.5 cpu.max=50000_100000
		cpuset-0-3 cpuset.cpus=0-3
		quota-4+cpuset-0-1 cpu.max=400000_100000 cpuset.cpus=0-1
		memory-200M memory.max=209715200
		memory-2G+quota-3 memory.max=2147483648 cpu.max=300000_100000
	CASES
	cat "$log"
}

tests() {
	setup
	local parent=$cg/v2host-tests
	mkdir -p $parent
	echo "+cpu +cpuset +memory" >$parent/cgroup.subtree_control
	local pass=0 fail=0
	for t in "$bin"/tests/*.test; do
		local name pkg
		name=$(basename "$t" .test)
		pkg=${name//-//}
		mkdir $parent/$name
		(cd "$root/$pkg" && RATION_TEST_PREBUILT=$bin inside $parent/$name "$t" -test.v -test.count=1 -test.timeout=5m ${RUN:+-test.run "$RUN"} ${SKIP:+-test.skip "$SKIP"}) >"$out/test-$name.txt" 2>&1
		local rc=$?
		echo "$pkg exit $rc: $(grep -c '^--- PASS' "$out/test-$name.txt") passed, $(grep -c '^--- FAIL' "$out/test-$name.txt") failed, $(grep -c '^--- SKIP' "$out/test-$name.txt") skipped" | tee -a "$out/tests.txt"
		grep -E '^(--- FAIL|--- SKIP|FAIL|panic)' "$out/test-$name.txt" | head -20
		[ $rc = 0 ] && pass=$((pass + 1)) || fail=$((fail + 1))
		rmdir $parent/$name 2>/dev/null
	done
	rmdir $parent/*/ $parent 2>/dev/null
	echo "test binaries: $pass passed, $fail failed" | tee -a "$out/tests.txt"
}

mempod() {
	setup
	(cd "$root/bench" && "$bin/bench/scenario" -bin "$bin/bench" -out "$out/mempod" -only mempod -note "cgroup v2 host: $(nproc) CPUs, kernel $(uname -r)") >"$out/mempod.log" 2>&1
	echo "scenario exit $?"
	tail -5 "$out/mempod.log"
	cat "$out/mempod/RESULTS.md" 2>/dev/null | sed -n '/emory-bound/,$p'
}

pool() {
	local n=${1:-10}
	mkdir -p "$out"
	: >"$out/pool-raw.txt"
	for _ in $(seq "$n"); do
		(cd "$root/bench/pool" && "$bin/bench/pool.test" -test.run NONE -test.bench Pool -test.benchtime 200000x -test.count 1 -test.benchmem) >>"$out/pool-raw.txt" 2>&1
	done
	grep -c '^BenchmarkPool' "$out/pool-raw.txt"
}

case ${1:-} in
build) build ;;
limits) limits ;;
tests) tests ;;
mempod) mempod ;;
pool) pool "${2:-10}" ;;
*)
	sed -n '2,21p' "$0" >&2
	exit 2
	;;
esac
