#!/usr/bin/env bash
# Runs LangGraph's own server test suite (libs/langgraph-api/tests/api.test.mts of a langgraphjs
# checkout, with its tests/graphs and their langgraph.json) against agentplane, embedded or on
# Redis, or against LangGraph's own in-memory server (`langgraphjs dev`) for comparison, and
# prints the counts. Nothing of the checkout enters this repository: the suite is prepared in a
# work folder outside it (default $TMPDIR/agentplane-langgraph-suite) with the checkout's package
# versions installed from the npm registry. Every process started here is stopped by its id.
#
#   scripts/langgraph-suite.sh /path/to/langgraphjs                      # agentplane, embedded
#   scripts/langgraph-suite.sh /path/to/langgraphjs --redis redis://127.0.0.1:6379/11
#   scripts/langgraph-suite.sh /path/to/langgraphjs --server langgraph   # LangGraph's server
#
# The checkout is at a tag such as @langchain/langgraph-api@2.0.0. Options: --port N (default
# 12024; the worker's probes take N+1), --workdir DIR, --key-prefix P (Redis keys; default
# lgsuite-<pid>, deleted afterwards), --agentplane DIR (the agentplane tree to start; default
# this one), --timeout S (the suite's bound, default 1200), -t PATTERN (vitest's test-name filter),
# --strict (no effect, see below).
#
# What is changed in the copy: the suite's hard-coded http://localhost:2024 becomes the chosen
# port. agentplane is started on the suite's own langgraph.json as it is (graphs, env, http.app,
# ui); the graph files are unedited. (--strict, which meant that before agentplane served
# http.app and ui, is accepted and changes nothing.)
set -euo pipefail

die() { echo "langgraph-suite: $*" >&2; exit 2; }

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

CHECKOUT=""
SERVER=agentplane
REDIS=""
PORT=12024
WORKDIR="${TMPDIR:-/tmp}/agentplane-langgraph-suite"
PREFIX="lgsuite-$$"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SUITE_TIMEOUT=1200
START_TIMEOUT=120
FILTER=""


while [ $# -gt 0 ]; do
  case "$1" in
    --server) SERVER="${2:?}"; shift 2 ;;
    --redis) REDIS="${2:?}"; shift 2 ;;
    --port) PORT="${2:?}"; shift 2 ;;
    --workdir) WORKDIR="${2:?}"; shift 2 ;;
    --key-prefix) PREFIX="${2:?}"; shift 2 ;;
    --agentplane) REPO="$(cd "${2:?}" && pwd)"; shift 2 ;;
    --timeout) SUITE_TIMEOUT="${2:?}"; shift 2 ;;
    -t) FILTER="${2:?}"; shift 2 ;;
    --strict) shift ;;
    -h|--help) usage 0 ;;
    -*) echo "unknown option $1" >&2; usage 2 ;;
    *) [ -z "$CHECKOUT" ] || die "one checkout path only"; CHECKOUT="$(cd "$1" && pwd)"; shift ;;
  esac
done

[ -n "$CHECKOUT" ] || usage 2
API_DIR="$CHECKOUT/libs/langgraph-api"
[ -f "$API_DIR/tests/api.test.mts" ] || die "$API_DIR/tests/api.test.mts: not a langgraphjs checkout"
case "$SERVER" in agentplane|langgraph) ;; *) die "--server is agentplane or langgraph" ;; esac
[ "$SERVER" = agentplane ] || [ -z "$REDIS" ] || die "--redis is for agentplane"
case "$WORKDIR/" in "$REPO"/*) die "the work folder must be outside the repository ($REPO)" ;; esac
command -v curl >/dev/null || die "curl is needed"

if [ "$SERVER" = langgraph ]; then LABEL="LangGraph server"
elif [ -n "$REDIS" ]; then LABEL="agentplane Redis"
else LABEL="agentplane embedded"; fi

# ---------------------------------------------------------------- processes, stopped by id
GROUPS_STARTED=()
cleanup() {
  local g i
  for g in "${GROUPS_STARTED[@]}"; do kill -TERM -- "-$g" 2>/dev/null || true; done
  for g in "${GROUPS_STARTED[@]}"; do
    for i in $(seq 1 40); do kill -0 -- "-$g" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$g" 2>/dev/null || true
  done
  GROUPS_STARTED=()
  if [ -n "$REDIS" ] && command -v redis-cli >/dev/null; then
    for pattern in "$PREFIX:*" "{$PREFIX}:*"; do
      # In the server (SCAN and DEL in one script): key names may hold NUL bytes (the metadata
      # index's), which redis-cli's output cuts and no argument list can carry.
      redis-cli -u "$REDIS" eval "local c = '0' repeat local r = redis.call('SCAN', c, 'MATCH', ARGV[1], 'COUNT', 1000) c = r[1] for _, k in ipairs(r[2]) do redis.call('DEL', k) end until c == '0' return 0" 0 "$pattern" >/dev/null 2>&1 || true
    done
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start NAME CMD...: in a process group of its own whose id is recorded (stopped as a whole)
start() {
  local name="$1"; shift
  setsid bash -c 'echo $$ > "$0"; exec "$@"' "$LOGS/$name.pid" "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
  local i
  for i in $(seq 1 50); do [ -s "$LOGS/$name.pid" ] && break; sleep 0.1; done
  GROUPS_STARTED+=("$(cat "$LOGS/$name.pid")")
}

# wait_ready NAME URL: until URL answers 2xx, or the process ends (its reason printed)
wait_ready() {
  local name="$1" url="$2" pid i
  pid="$(cat "$LOGS/$name.pid")"
  for i in $(seq 1 "$START_TIMEOUT"); do
    if curl -fsS -m 2 -o /dev/null "$url" 2>/dev/null; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      local reason
      reason="$(grep -m1 -E 'Invalid configuration|Error' "$LOGS/$name.log" || tail -n1 "$LOGS/$name.log")"
      echo "langgraph-suite: $LABEL did not start ($name; log: $LOGS/$name.log)" >&2
      echo "$LABEL: did not start: $reason"
      exit 1
    fi
    sleep 1
  done
  die "$name did not answer $url within ${START_TIMEOUT}s (log: $LOGS/$name.log)"
}

# ---------------------------------------------------------------- the suite's folder
mkdir -p "$WORKDIR"
LOGS="$WORKDIR/logs/$(date -u +%Y%m%dT%H%M%SZ)-${SERVER}${REDIS:+-redis}"
mkdir -p "$LOGS"

# the checkout's own versions of its packages, and its test dependencies' ranges
node - "$CHECKOUT" "$WORKDIR/package.next.json" <<'EOF'
const fs = require('node:fs'), path = require('node:path');
const [checkout, out] = process.argv.slice(2);
const libs = path.join(checkout, 'libs');
const byName = {};
for (const dir of fs.readdirSync(libs)) {
  const file = path.join(libs, dir, 'package.json');
  if (fs.existsSync(file)) { const p = JSON.parse(fs.readFileSync(file, 'utf8')); byName[p.name] = p.version; }
}
const api = JSON.parse(fs.readFileSync(path.join(libs, 'langgraph-api', 'package.json'), 'utf8'));
const range = (name) => api.devDependencies?.[name] ?? api.dependencies?.[name];
const deps = {};
for (const name of ['@langchain/langgraph-api', '@langchain/langgraph-cli', '@langchain/langgraph-ui', '@langchain/langgraph-sdk', '@langchain/langgraph', '@langchain/langgraph-checkpoint']) {
  if (!byName[name]) throw new Error(`${name} not found under ${libs}`);
  deps[name] = byName[name];
}
for (const name of ['@langchain/core', 'vitest', 'wait-port', 'postgres', 'jose', 'typescript', 'hono', 'uuid', 'zod', 'tsx']) {
  if (range(name)) deps[name] = range(name);
}
fs.writeFileSync(out, JSON.stringify({ name: 'langgraph-api-suite', private: true, type: 'module', dependencies: deps }, null, 2) + '\n');
EOF
if ! cmp -s "$WORKDIR/package.next.json" "$WORKDIR/package.json" || [ ! -x "$WORKDIR/node_modules/.bin/vitest" ]; then
  mv "$WORKDIR/package.next.json" "$WORKDIR/package.json"
  echo "langgraph-suite: npm install in $WORKDIR" >&2
  (cd "$WORKDIR" && rm -rf node_modules package-lock.json && timeout 900 npm install --no-audit --no-fund --loglevel=error >"$LOGS/npm-install.log" 2>&1) \
    || die "npm install failed (log: $LOGS/npm-install.log)"
else
  rm -f "$WORKDIR/package.next.json"
fi

rm -rf "$WORKDIR/tests"
mkdir -p "$WORKDIR/tests"
cp "$API_DIR/tests/api.test.mts" "$API_DIR/tests/utils.mts" "$WORKDIR/tests/"
cp -R "$API_DIR/tests/graphs" "$WORKDIR/tests/graphs"
cp "$API_DIR/vitest.config.js" "$WORKDIR/"
sed -i "s#localhost:2024#localhost:$PORT#g" "$WORKDIR/tests/api.test.mts"
GRAPHS="$WORKDIR/tests/graphs"

# ---------------------------------------------------------------- the server
URL="http://127.0.0.1:$PORT"
for p in "$PORT" $([ -z "$REDIS" ] || echo "$((PORT + 1))"); do
  [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/" || true)" = 000 ] \
    || die "something already answers on 127.0.0.1:$p: choose another --port"
done
if [ "$SERVER" = langgraph ]; then
  start langgraph env -u CI LANGSMITH_TRACING=false LANGCHAIN_TRACING_V2=false \
    bash -c 'cd "$0" && exec ./node_modules/.bin/langgraphjs dev --config tests/graphs/langgraph.json --port "$1" --host localhost --no-browser' "$WORKDIR" "$PORT"
  wait_ready langgraph "$URL/ok"
else
  [ -x "$REPO/node_modules/.bin/tsx" ] || die "$REPO/node_modules: run npm install in agentplane first"
  CONFIG="$GRAPHS/langgraph.json"
  COMMON=(env -u CI -u REDIS_CLUSTER_NODES -u REDIS_SENTINELS -u AGENTS_MODULE)
  [ -n "$REDIS" ] || COMMON+=(-u REDIS_URL)
  COMMON+=(
    # LANGGRAPH_CONFIG too, for an agentplane tree from before SERVICE_LANGGRAPH_JSON (a path there is that setting).
    "SERVICE_LANGGRAPH_JSON=$CONFIG" "LANGGRAPH_CONFIG=$CONFIG"
    SERVICE_HOST=127.0.0.1 SERVICE_RATE_LIMIT=off LOG_LEVEL="${LOG_LEVEL:-warn}")
  if [ -n "$REDIS" ]; then
    COMMON+=("REDIS_URL=$REDIS" "SERVICE_KEY_PREFIX=$PREFIX")
    start api "${COMMON[@]}" SERVICE_PORT="$PORT" bash -c 'cd "$0" && exec ./node_modules/.bin/tsx src/main/api.ts' "$REPO"
    start worker "${COMMON[@]}" WORKER_PORT="$((PORT + 1))" bash -c 'cd "$0" && exec ./node_modules/.bin/tsx src/main/worker.ts' "$REPO"
    wait_ready api "$URL/ok"
    wait_ready worker "http://127.0.0.1:$((PORT + 1))/health/ready"
  else
    start api "${COMMON[@]}" SERVICE_PORT="$PORT" bash -c 'cd "$0" && exec ./node_modules/.bin/tsx src/main/api.ts' "$REPO"
    wait_ready api "$URL/ok"
  fi
fi

# ---------------------------------------------------------------- the suite
echo "langgraph-suite: $LABEL on $URL, suite $CHECKOUT ($(git -C "$CHECKOUT" describe --tags --always 2>/dev/null || echo '?')), logs $LOGS" >&2
VITEST_ARGS=(run tests/api.test.mts --reporter=default --reporter=json "--outputFile.json=$LOGS/result.json")
[ -z "$FILTER" ] || VITEST_ARGS+=(-t "$FILTER")
set +e
(cd "$WORKDIR" && env -u CI timeout "$SUITE_TIMEOUT" ./node_modules/.bin/vitest "${VITEST_ARGS[@]}" >"$LOGS/vitest.log" 2>&1)
STATUS=$?
set -e
[ -s "$LOGS/result.json" ] || die "the suite wrote no result (exit $STATUS; log: $LOGS/vitest.log)"

node - "$LOGS/result.json" "$LOGS/failures.tsv" "$LABEL" "$LOGS/vitest.log" <<'EOF'
const fs = require('node:fs');
const [file, out, label, log] = process.argv.slice(2);
const r = JSON.parse(fs.readFileSync(file, 'utf8'));
// the JSON report loses a timeout's message (STACK_TRACE_ERROR): the default reporter's has it
const logLines = fs.readFileSync(log, 'utf8').replace(/\x1b\[[0-9;]*m/g, '').split('\n');
const fromLog = (t) => {
  const at = logLines.findIndex((l) => l.trim().endsWith(['', ...t.ancestorTitles, t.title].join(' > ')) && l.includes('FAIL'));
  return at >= 0 ? (logLines[at + 1] ?? '') : '';
};
const lines = [];
for (const f of r.testResults) for (const t of f.assertionResults) {
  if (t.status !== 'failed') continue;
  let first = (t.failureMessages[0] ?? '').split('\n').find((l) => l.trim()) ?? '';
  if (first.includes('STACK_TRACE_ERROR')) first = fromLog(t) || first;
  lines.push(`${t.fullName}\t${first.trim().slice(0, 300)}`);
}
fs.writeFileSync(out, lines.join('\n') + (lines.length ? '\n' : ''));
for (const l of lines) console.log(`FAIL ${l.replace('\t', ' :: ')}`);
console.log(`${label}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
EOF
echo "langgraph-suite: failures in $LOGS/failures.tsv" >&2
