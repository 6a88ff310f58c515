#!/usr/bin/env bash
# Before and after in one run: the same benchmark on two checkouts of agentplane, alternated
# A B B A (then A B … for more rounds), on this machine in one session, so that both trees
# see the same load. Each run's output goes to <out>/<round>-<label>.log; the last lines of
# each are printed (the benchmark's own summary). Benchmarks run with --no-write: BENCHMARKS.md
# is written by hand from these logs.
#
#   bench/compare-trees.sh [--rounds N] [--out DIR] <label A>=<tree A> <label B>=<tree B> -- <npm script> [args…]
#
# e.g. git worktree add /tmp/before faa1785 && ln -s "$PWD/node_modules" /tmp/before/node_modules
#      bench/compare-trees.sh before=/tmp/before after=. -- bench:runs --runs 2000 --warmup 500 --workers 2
set -euo pipefail

rounds=2
out="${TMPDIR:-/tmp}/agentplane-compare-$(date +%Y%m%dT%H%M%S)"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 4 ] && [ "$3" = "--" ] || { sed -n '2,12p' "$0" >&2; exit 2; }
labelA="${1%%=*}" treeA="${1#*=}"
labelB="${2%%=*}" treeB="${2#*=}"
shift 3
script="$1"; shift
for tree in "$treeA" "$treeB"; do
  [ -f "$tree/package.json" ] && [ -d "$tree/node_modules" ] || { echo "compare-trees: $tree is not a checkout with node_modules" >&2; exit 2; }
done
mkdir -p "$out"

run() { # round label tree [benchmark args…]
  local round="$1" label="$2" tree="$3"
  shift 3
  local log="$out/$round-$label.log"
  echo "== round $round: $label ($(git -C "$tree" rev-parse --short HEAD 2>/dev/null || echo '?')), load $(cut -d' ' -f1-3 /proc/loadavg)"
  (cd "$tree" && npm run -s "$script" -- "$@" --no-write) >"$log" 2>&1 </dev/null || echo "   (exit $? — see $log)"
  tail -n 25 "$log" | sed 's/^/   /'
}

for ((round = 1; round <= rounds; round++)); do
  if ((round % 2 == 1)); then order=("$labelA" "$treeA" "$labelB" "$treeB"); else order=("$labelB" "$treeB" "$labelA" "$treeA"); fi
  run "$round" "${order[0]}" "${order[1]}" "$@"
  run "$round" "${order[2]}" "${order[3]}" "$@"
done
echo "logs: $out"
