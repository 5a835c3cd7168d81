#!/usr/bin/env bash
# Interleaved A/B of the pool benchmarks at two git revisions, as quoted in
# bench/pool/results/README.md ("interleaved A/B"):
#
#   bench/pool/ab.sh REV_A REV_B [rounds] [benchtime] [pattern]
#     (defaults: 10 rounds, 1000000x,
#      'Pool/work=trivial/lib=(pond-bounded|ration-go|ration-map)$')
#
# It builds bench/pool's test binary once at each revision (in a temporary
# git worktree), then runs the two alternately, one -count 1 run each per
# round, so that load changes spread over both alike; benchstat compares
# them. Raw results go to $OUT/a.txt and $OUT/b.txt (OUT defaults to
# /tmp/ration-bench-ab).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
rev_a=$1 rev_b=$2
rounds=${3:-10}
benchtime=${4:-1000000x}
pattern=${5:-'Pool/work=trivial/lib=(pond-bounded|ration-go|ration-map)$'}
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
gopath=$(go env GOPATH)
export PATH="$gopath/bin:$PATH"
command -v benchstat >/dev/null || go install golang.org/x/perf/cmd/benchstat@latest
out=${OUT:-/tmp/ration-bench-ab}
mkdir -p "$out"
tmp=$(mktemp -d)
cleanup() {
	for side in a b; do
		git -C "$repo" worktree remove --force "$tmp/$side" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
for side in a b; do
	rev=$rev_a
	[ "$side" = b ] && rev=$rev_b
	git -C "$repo" worktree add -q --detach "$tmp/$side" "$rev"
	(cd "$tmp/$side/bench/pool" && go test -c -o "$out/$side.test" .)
done
: >"$out"/a.txt
: >"$out"/b.txt
for i in $(seq "$rounds"); do
	echo "round $i/$rounds" >&2
	for side in a b; do
		"$out/$side.test" -test.run NONE -test.bench "$pattern" -test.benchtime "$benchtime" -test.count 1 -test.benchmem >>"$out/$side.txt"
	done
done
benchstat "$out"/a.txt "$out"/b.txt
