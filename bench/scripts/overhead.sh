#!/bin/sh
# overhead.sh: per-job overhead of ration run against xargs -P and GNU
# parallel: N jobs of `true` at the same -j, timed with hyperfine.
#
# usage: bench/scripts/overhead.sh [N] [JOBS]    (defaults: 2000 4)
#   RUNS=5 (hyperfine runs per command), OUT=dir for the JSON/markdown.
# Needs: go, hyperfine (https://github.com/sharkdp/hyperfine: `apt install
# hyperfine`, `brew install hyperfine` or `cargo install hyperfine`), xargs;
# GNU parallel is optional (skipped with a note if absent).
# Target: ration within 1.3x of xargs -P, faster than GNU parallel.
set -eu
command -v hyperfine >/dev/null 2>&1 || { echo "overhead.sh: needs hyperfine (apt install hyperfine, brew install hyperfine or cargo install hyperfine)" >&2; exit 2; }
N=${1:-2000}
J=${2:-4}
RUNS=${RUNS:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
OUT=${OUT:-$tmp}

(cd "$root" && go build -o "$tmp/ration" ./cmd/ration)
seq "$N" > "$tmp/in"

set -- \
  -n "ration run -j $J" "$tmp/ration run -j $J --no-bar true < $tmp/in 2>/dev/null" \
  -n "xargs -P $J -n 1" "xargs -P $J -n 1 true < $tmp/in"
if command -v parallel >/dev/null 2>&1; then
  set -- "$@" -n "parallel -j $J" "parallel --will-cite -j $J true < $tmp/in"
else
  echo "note: GNU parallel not installed; comparing with xargs only" >&2
fi

echo "$N jobs of true, -j $J, $RUNS runs each, on $(nproc) CPUs (load: $(cut -d' ' -f1-3 /proc/loadavg))"
hyperfine --style basic --warmup 1 --runs "$RUNS" \
  --export-json "$OUT/overhead.json" --export-markdown "$OUT/overhead.md" "$@"

# Ratios from the mean times.
python3 - "$OUT/overhead.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
names = list(r)
ration, xargs = r[names[0]]["mean"], r[names[1]]["mean"]
print(f"ration / xargs   = {ration / xargs:.2f}  (target <= 1.30)")
if len(names) > 2:
    print(f"ration / parallel = {ration / r[names[2]]['mean']:.2f}  (target < 1.00)")
PY
