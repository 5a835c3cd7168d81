#!/bin/bash
# flatmem.sh: ration's own peak RSS over a long lazy input: N inputs from a
# generator on stdin, `true` as the command, -j J. Prints ration's VmHWM
# (peak RSS of the ration process alone, polled from /proc until it exits)
# and the wall time. Target: under 64 MiB for 1,000,000 inputs at -j 4.
#
# usage: bench/scripts/flatmem.sh [N] [J]    (defaults: 1000000 4)
set -euo pipefail
N=${1:-1000000}
J=${2:-4}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/ration" ./cmd/ration)

start=$(date +%s.%N)
seq "$N" | "$tmp/ration" run -j "$J" --no-bar true 2>"$tmp/stderr" &
pid=$!
hwm=0
samples=""
t0=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
  v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  if [ -n "$v" ]; then
    hwm=$v
    now=$(date +%s)
    if [ $(( now - t0 )) -ge 60 ]; then  # a sample a minute shows the curve
      samples="$samples ${hwm}kB"
      t0=$now
    fi
  fi
  sleep 0.5
done
wait "$pid" && rc=0 || rc=$?
end=$(date +%s.%N)
echo "inputs=$N jobs=$J exit=$rc wall=$(echo "$end - $start" | bc)s"
echo "ration peak RSS (VmHWM): ${hwm} kB = $(( hwm / 1024 )) MiB (target < 64 MiB)"
[ -n "$samples" ] && echo "VmHWM once a minute:$samples"
tail -n 1 "$tmp/stderr"
[ "$rc" = 0 ] && [ "$hwm" -lt $(( 64 * 1024 )) ]
