--[[
  Records a step in one round trip: its checkpoint (only while the run is the session's running
  current run), the spans and `node_end` events of the nodes that returned (one for an agent's
  node; none or several for a graph's superstep); then the `node_start` events of the next
  nodes or, when the next node is __end__, the run's completion (status, its root span, the
  `completed` event). Several JSON documents in one argument are one per line.

  KEYS[1] session hash   KEYS[2] state hash   KEYS[3] checkpoints list   KEYS[4] spans list
  KEYS[5] run hash   KEYS[6] the tenant's event stream   KEYS[7] sessions-by-activity sorted set
  KEYS[8] active-runs sorted set   KEYS[9] runs queued behind on the session
  KEYS[10] schedule run links hash of the tenant
  KEYS[11] the tenant's event bytes hash   KEYS[12] an earlier version's index of events by run, deleted (includes/publishEvent.lua)

  ARGV, named and ordered by SCRIPT_ARGS.stepRun (script-args.ts):
  ARGV[1] session id   ARGV[2] run id   ARGV[3] checkpoint id   ARGV[4] next node
  ARGV[5] now (RFC 3339)   ARGV[6] now (ms)
  ARGV[7] max state bytes   ARGV[8] max state keys   ARGV[9] checkpoints retained   ARGV[10] spans retained
  ARGV[11] events retained   ARGV[12] events channel   ARGV[13] tenant as a JSON string
  ARGV[14] the span JSON of each node that returned   ARGV[15] their node_end events' JSON
  ARGV[16] the next events' JSON: node_start of each next node, or `completed` alone
  ARGV[17] the run's root span JSON when it completes, '' otherwise
  ARGV[18] prefix of the tenant's run indexes
  ARGV[19] event bytes retained per tenant   ARGV[20] event bytes retained per run
  ARGV[21..] pairs: state key, raw JSON value

  Returns {1, history entry JSON} for a step, {1, history entry JSON, run hash as a flat array,
  runs waiting behind it, schedule link or ''} when the run completed, or (codes of scripts.ts)
    {NOT_FOUND} no such session
    {RUN_STATUS, status} the run is not the session's running current run (it was cancelled)
    {STATE_TOO_LARGE} / {STATE_TOO_MANY_KEYS} the merged state would pass a limit; nothing is written
]]
--@include constants
--@include runStatus
--@include appendCheckpoint
--@include publishEvent
--@include stateJson
local meta = redis.call('HMGET', KEYS[1], 'agent_id', 'seq', 'run_status', 'state_bytes', 'state_keys', 'run_id')
if not meta[1] then return {NOT_FOUND} end
if meta[6] ~= ARGV[2] or meta[3] ~= 'running' then return {RUN_STATUS, meta[3] or ''} end
local entry, seq, bytes, count = append_checkpoint(KEYS[1], KEYS[2], KEYS[3], ARGV[3], ARGV[4], ARGV[5], ARGV, 21,
  tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]), meta[2], meta[4], meta[5])
if type(entry) == 'number' then return {entry} end
local retain = tonumber(ARGV[10])
local function add_span(json)
  if redis.call('RPUSH', KEYS[4], json) > retain then redis.call('LTRIM', KEYS[4], -retain, -1) end
end
-- The step's events are all of its run: counted together, the counters written once (settle)
-- before each return below.
local events = event_batch({ stream = KEYS[6], bytes = KEYS[11], by_run = KEYS[12] }, { retain = ARGV[11], bytes = ARGV[19], run_bytes = ARGV[20] },
  ARGV[12], ARGV[13], ARGV[2])
-- A plain find per line: a pattern's character class would cost a test per byte of the JSON.
local function each_line(text, f)
  local from = 1
  while true do
    local at = string.find(text, '\n', from, true)
    local line = string.sub(text, from, (at or 0) - 1)
    if line ~= '' then f(line) end
    if not at then return end
    from = at + 1
  end
end
each_line(ARGV[14], add_span)
each_line(ARGV[15], events.publish)
if ARGV[17] == '' then
  each_line(ARGV[16], events.publish)
  events.settle()
  return {1, entry}
end
set_run_status(KEYS[5], KEYS[1], KEYS[8], ARGV[18], ARGV[2], 'completed', ARGV[5], ARGV[6], nil, nil, { meta[6], seq })
redis.call('ZADD', KEYS[7], ARGV[6], ARGV[1])
add_span(ARGV[17])
-- A run started by a wait (field `waited`) announces its end with the run and, when the state
-- is small, the state: the waiting replica answers from it and reads nothing back.
local run = redis.call('HGETALL', KEYS[5])
local stop = nil
local fields = {}
for i = 1, #run, 2 do fields[run[i]] = run[i + 1] end
if fields.waited and bytes <= STOP_STATE_BYTES and count <= SMALL_STATE_KEYS then
  stop = '{"run":' .. cjson.encode(fields) .. ',"state":' .. state_json(KEYS[2]) .. '}'
end
events.publish(ARGV[16], stop)
events.settle()
local link = redis.call('HGET', KEYS[10], ARGV[2]) or ''
return {1, entry, run, redis.call('LLEN', KEYS[9]), link}
