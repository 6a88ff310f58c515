#!/usr/bin/env bash
# Instructions per echo run of redis-server (callgrind), counted rather than timed: the same
# for the same code whatever else the machine does, so two trees compare within about 1 %
# where CPU time spreads by 20 % on a shared machine. API and worker run natively on a private
# redis-server under valgrind; one closed-loop client (bench/instructions/client.ts) runs
# `warmup` runs, then the counters are zeroed and `runs` runs measured; then 10 s idle are
# measured and their share (per second of the measured phase) taken off: what is left is the
# run path's, not the timers'. Prints Ir per run (raw and net of idle).
#
#   bench/instructions/run.sh [--tree DIR] [--mode light|wait] [--runs N] [--warmup N] [--port P] [--redis-server PATH]
#
# --warmup 2200 fills the tenant's event stream past its 10,000 events: each event then drops
# the oldest (the steady state of a busy tenant). Needs valgrind.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tree="$(cd "$here/../.." && pwd)" mode=light runs=1000 warmup=300 port=17700 server=redis-server
while [ $# -gt 0 ]; do
  case "$1" in
    --tree) tree="$(cd "$2" && pwd)"; shift 2 ;;
    --mode) mode="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --redis-server) server="$2"; shift 2 ;;
    *) sed -n '2,13p' "$0" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "bench/instructions/run.sh: needs valgrind" >&2; exit 2; }
out="$(mktemp -d "${TMPDIR:-/tmp}/agentplane-instructions.XXXXXX")"
redis_url="redis://127.0.0.1:$port" api_url="http://127.0.0.1:$((port + 1))"
pids=()
stop() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/redis.%p" "$server" --port "$port" --save '' --appendonly no >"$out/redis.log" 2>&1 &
redis=$!; pids+=("$redis")
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.2; done
cd "$tree"
export REDIS_URL="$redis_url" SERVICE_PORT=$((port + 1)) WORKER_PORT=$((port + 2)) SERVICE_RATE_LIMIT=off
node --import tsx src/main/api.ts >"$out/api.log" 2>&1 & pids+=($!)
node --import tsx src/main/worker.ts >"$out/worker.log" 2>&1 & pids+=($!)
until curl -sf "$api_url/health/ready" >/dev/null; do sleep 0.5; done
node --import tsx "$here/client.ts" "$api_url" "$warmup" "$mode" "$redis_url"
callgrind_control -z "$redis" >/dev/null 2>&1
start=$(date +%s.%N)
node --import tsx "$here/client.ts" "$api_url" "$runs" "$mode" "$redis_url"
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
callgrind_control -d "$redis" >/dev/null 2>&1
callgrind_control -z "$redis" >/dev/null 2>&1
sleep 10
callgrind_control -d "$redis" >/dev/null 2>&1
total() { grep -m1 '^summary:' "$1" | awk '{print $2}'; }
measured=$(total "$(ls "$out"/redis.*.1)") idle=$(total "$(ls "$out"/redis.*.2)")
echo "redis-server instructions per $mode run ($runs runs after $warmup, $(git -C "$tree" rev-parse --short HEAD)): $((measured / runs)), net of idle $(echo "($measured - $idle / 10 * $elapsed) / $runs" | bc) (measured ${elapsed%.*} s)"
rm -rf "$out"
