--[[
  A worker takes a run: it becomes running (from queued, or running when its job is
  re-delivered after a crash) and the `node_start` event of the node its session runs next is
  published (none when the session is at __end__, or ARGV[7] is ''), in one round trip.

  KEYS[1] run hash   KEYS[2] session hash   KEYS[3] active-runs sorted set of the tenant
  KEYS[4] the tenant's event stream   KEYS[5] state hash   KEYS[6] checkpoints list
  KEYS[7] the tenant's event bytes hash   KEYS[8] an earlier version's index of events by run, deleted (includes/publishEvent.lua)

  ARGV, named and ordered by SCRIPT_ARGS.beginRun (script-args.ts):
  ARGV[1] run id   ARGV[2] now (RFC 3339)   ARGV[3] now (ms)
  ARGV[4] events retained   ARGV[5] events channel   ARGV[6] tenant as a JSON string
  ARGV[7] the node_start event's JSON after its "node" value (`,"session":…}`); '' publishes none
  ARGV[8] prefix of the tenant's run indexes
  ARGV[9] event bytes retained per tenant   ARGV[10] event bytes retained per run

  Returns {run hash as a flat array, the node of the node_start event ('' when none), and when
  the state is small (at most SMALL_STATE_KEYS keys) the latest history entry JSON and the state
  JSON, so the worker reads nothing more}, or (codes of scripts.ts)
    {NOT_FOUND} no such run
    {RUN_STATUS, current status} the run is neither queued nor running
]]
--@include constants
--@include runStatus
--@include publishEvent
--@include stateJson
local before = run_meta(KEYS[1])
local current = before[1]
if not current then return {NOT_FOUND} end
if current ~= 'queued' and current ~= 'running' then return {RUN_STATUS, current} end
-- The session's fields for set_run_status ({run_id}) and for the reply, in one read.
local session = redis.call('HMGET', KEYS[2], 'run_id', 'node_id', 'seq', 'state_keys')
set_run_status(KEYS[1], KEYS[2], KEYS[3], ARGV[8], ARGV[1], 'running', ARGV[2], ARGV[3], nil, before, session)
local node = session[2]
if node and node ~= '__end__' and ARGV[7] ~= '' then
  publish_event({ stream = KEYS[4], bytes = KEYS[7], by_run = KEYS[8] }, { retain = ARGV[4], bytes = ARGV[9], run_bytes = ARGV[10] },
    ARGV[5], ARGV[6], ARGV[1], '{"type":"node_start","node":' .. cjson.encode(node) .. ARGV[7])
else
  node = ''
end
local run = redis.call('HGETALL', KEYS[1])
if tonumber(session[3] or '0') > 0 and tonumber(session[4] or '0') <= SMALL_STATE_KEYS then
  return {run, node, redis.call('LINDEX', KEYS[6], -1), state_json(KEYS[5])}
end
return {run, node}
