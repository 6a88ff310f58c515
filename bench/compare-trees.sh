#!/usr/bin/env bash
# Before and after in one run: the same benchmark on two checkouts of agentplane, alternated
# A B B A (then A B … for more rounds), on this machine in one session, so that both trees
# see the same load. Each run's output goes to <out>/<round>-<label>.log; the last lines of
# each are printed (the benchmark's own summary). Benchmarks run with --no-write: BENCHMARKS.md
# is written by hand from these logs.
#
# Each tree runs its own benchmark unless --client names one of the two labels: then that
# tree's `bench/` drives both (the same client measuring both servers; in the other tree it is
# copied to .bench-client/ for the run, so its imports of ../../src are that tree's, and the
# npm script's command is taken from the client tree's package.json).
#
#   bench/compare-trees.sh [--rounds N] [--out DIR] [--client LABEL] <label A>=<tree A> <label B>=<tree B> -- <npm script> [args…]
#
# e.g. git worktree add /tmp/before faa1785 && ln -s "$PWD/node_modules" /tmp/before/node_modules
#      bench/compare-trees.sh before=/tmp/before after=. -- bench:runs --runs 2000 --warmup 500 --workers 2
#      bench/compare-trees.sh --client faa faa=/tmp/faa cur=. -- bench:runs --mode wait --workers 1 --clients 1,8
set -euo pipefail

rounds=2
client=''
out="${TMPDIR:-/tmp}/agentplane-compare-$(date +%Y%m%dT%H%M%S)"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --client) client="$2"; shift 2 ;;
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

# --client: the client tree, and its npm script's command with bench/ as .bench-client/.
clientTree='' clientCommand=''
if [ -n "$client" ]; then
  case "$client" in
    "$labelA") clientTree="$treeA" ;;
    "$labelB") clientTree="$treeB" ;;
    *) echo "compare-trees: --client $client is neither $labelA nor $labelB" >&2; exit 2 ;;
  esac
  clientCommand="$(cd "$clientTree" && node -p "require('./package.json').scripts[process.argv[1]] ?? ''" "$script")"
  case "$clientCommand" in
    "tsx bench/"*) ;;
    *) echo "compare-trees: --client needs $script to be \"tsx bench/…\" in $clientTree/package.json (it is \"$clientCommand\")" >&2; exit 2 ;;
  esac
  clientCommand="${clientCommand/bench\//.bench-client/}"
fi

# The benchmark in `tree`: its own npm script, or the client tree's bench/ copied in.
bench() { # tree [benchmark args…]
  local tree="$1"
  shift
  if [ -z "$clientTree" ] || [ "$(cd "$tree" && pwd)" = "$(cd "$clientTree" && pwd)" ]; then
    (cd "$tree" && npm run -s "$script" -- "$@" --no-write)
    return
  fi
  rm -rf "$tree/.bench-client" && cp -r "$clientTree/bench" "$tree/.bench-client"
  local status=0
  # shellcheck disable=SC2086 # the command's words (tsx and its file)
  (cd "$tree" && npx --no-install $clientCommand "$@" --no-write) || status=$?
  rm -rf "$tree/.bench-client"
  return "$status"
}

run() { # round label tree [benchmark args…]
  local round="$1" label="$2" tree="$3"
  shift 3
  local log="$out/$round-$label.log"
  echo "== round $round: $label ($(git -C "$tree" rev-parse --short HEAD 2>/dev/null || echo '?')), load $(cut -d' ' -f1-3 /proc/loadavg)"
  bench "$tree" "$@" >"$log" 2>&1 </dev/null || echo "   (exit $? — see $log)"
  tail -n 25 "$log" | sed 's/^/   /'
}

for ((round = 1; round <= rounds; round++)); do
  if ((round % 2 == 1)); then order=("$labelA" "$treeA" "$labelB" "$treeB"); else order=("$labelB" "$treeB" "$labelA" "$treeA"); fi
  run "$round" "${order[0]}" "${order[1]}" "$@"
  run "$round" "${order[2]}" "${order[3]}" "$@"
done
echo "logs: $out"
