#!/bin/bash
# reportmem.sh: ration report's peak RSS on a long joblog: N job lines in
# GNU parallel's nine columns (a job every 10 ms, up to 2 s long, every
# 50th failed), rendered as SVG. Prints the joblog's size, the maximum
# resident set size (GNU time's %M) and the wall time. docs/observability.md
# quotes it for N = 1,000,000 (about 170 MB).
#
# usage: bench/scripts/reportmem.sh [N]    (default: 1000000)
set -euo pipefail
N=${1:-1000000}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/ration" ./cmd/ration)

awk -v n="$N" 'BEGIN {
  srand(1)
  print "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand"
  for (i = 1; i <= n; i++)
    printf "%d\t:\t%.3f\t%.3f\t0\t12\t%d\t0\tgofmt -l ./some/package/path/file_%d.go\n",
      i, 1700000000 + i / 100, rand() * 2, (i % 50 ? 0 : 1), i
}' >"$tmp/joblog"
echo "joblog: $N lines, $(stat -c %s "$tmp/joblog") bytes"
/usr/bin/time -f "ration report: max RSS %M kB, %e s" "$tmp/ration" report -o "$tmp/report.svg" "$tmp/joblog"
