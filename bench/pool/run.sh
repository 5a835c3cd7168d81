#!/usr/bin/env bash
# Benchmarks ration's pool against errgroup (SetLimit), pond, ants and conc
# and summarizes them with benchstat.
#
#   bench/pool/run.sh [count] [benchtime]     (defaults: 10, 200000x)
#
# The test binary is built once and run `count` times with -count 1, each run
# covering every library, so that load changes on a shared machine spread
# over all libraries alike instead of biasing whichever ran during a spike.
# Raw results go to $OUT/raw.txt, the benchstat table (one column per
# library) to $OUT/benchstat.txt; OUT defaults to /tmp/ration-bench-pool.
set -euo pipefail
cd "$(dirname "$0")"
count=${1:-10}
benchtime=${2:-200000x}
export PATH="$(go env GOPATH)/bin:$PATH"
command -v benchstat >/dev/null || go install golang.org/x/perf/cmd/benchstat@latest
out=${OUT:-/tmp/ration-bench-pool}
mkdir -p "$out"
go test -c -o "$out"/pool.test .
: >"$out"/raw.txt
for i in $(seq "$count"); do
	echo "run $i/$count" >&2
	"$out"/pool.test -test.run NONE -test.bench Pool -test.benchtime "$benchtime" -test.count 1 -test.benchmem >>"$out"/raw.txt
done
benchstat -col /lib "$out"/raw.txt 2>/dev/null >"$out"/benchstat.txt || benchstat "$out"/raw.txt >"$out"/benchstat.txt
cat "$out"/benchstat.txt
