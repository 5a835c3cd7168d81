#!/bin/bash
# gnu_product_rss.sh: ration's peak RSS while it streams the cartesian
# product of two ::: groups through --dry-run: 10^4 combinations
# (::: $(seq 100) ::: $(seq 100)) and 10^6 (::: $(seq 1000) ::: $(seq 1000)).
# The product is streamed, never stored, so the peak at 10^6 must stay
# within 1.5x of the peak at 10^4 (issue 13). Peak RSS is /usr/bin/time's
# "Maximum resident set size" (falls back to polling VmHWM in /proc), the
# median of three runs each.
#
# usage: bench/scripts/gnu_product_rss.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/ration" ./cmd/ration)

peak() { # n: peak RSS in kB of the n x n product
  local n=$1
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M' -o "$tmp/rss" "$tmp/ration" run --quiet --dry-run echo ::: $(seq "$n") ::: $(seq "$n") >"$tmp/out"
    cat "$tmp/rss"
  else
    "$tmp/ration" run --quiet --dry-run echo ::: $(seq "$n") ::: $(seq "$n") >"$tmp/out" &
    local pid=$! hwm=0 v
    while kill -0 "$pid" 2>/dev/null; do
      v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [ -n "$v" ] && hwm=$v
      sleep 0.01
    done
    wait "$pid"
    echo "$hwm"
  fi
  [ "$(wc -l <"$tmp/out")" -eq $((n * n)) ] || { echo "wrong number of lines for $n x $n" >&2; exit 1; }
}

median3() { # n: the median of three peaks (a busy machine delays the GC now and then)
  local a b c
  a=$(peak "$1"); b=$(peak "$1"); c=$(peak "$1")
  printf '%s\n%s\n%s\n' "$a" "$b" "$c" | sort -n | sed -n 2p
}

small=$(median3 100)
big=$(median3 1000)
ratio=$(awk -v a="$big" -v b="$small" 'BEGIN { printf "%.2f", a / b }')
echo "peak RSS: 10^4 combinations ${small} kB, 10^6 combinations ${big} kB, ratio ${ratio} (target <= 1.5)"
awk -v r="$ratio" 'BEGIN { exit !(r <= 1.5) }'
