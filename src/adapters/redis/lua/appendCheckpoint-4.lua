--[[
  Appends a checkpoint to a session atomically: seq_num = latest + 1, the patch shallow-merged
  into the latest state, in O(patch) (see includes/appendCheckpoint.lua).

  KEYS[1] session hash     (fields seq, node_id, run_status, updated_at, state_bytes, state_keys)
  KEYS[2] state hash       (state key -> raw JSON of its value)
  KEYS[3] checkpoints list (history entries, oldest first)
  KEYS[4] sessions-by-activity sorted set of the tenant (score = last write, ms)

  ARGV, named and ordered by SCRIPT_ARGS.appendCheckpoint (script-args.ts):
  ARGV[1] session id   ARGV[2] checkpoint id
  ARGV[3] node id of the new checkpoint, '' to keep the latest one
  ARGV[4] created_at (RFC 3339)   ARGV[5] now (ms)
  ARGV[6] expected latest seq_num, '' for none
  ARGV[7] '1' to refuse while the session's run is running
  ARGV[8] max state bytes   ARGV[9] max state keys   ARGV[10] checkpoints retained
  ARGV[11] '1' to answer the merged state too, when it is small (at most SMALL_STATE_KEYS keys)
  ARGV[12] run id: apply only while it is the session's current run and running; '' for any
  ARGV[13..] pairs: state key, raw JSON value

  Returns {1, entry JSON[, state JSON]} on success, or (codes of scripts.ts)
    {NOT_FOUND} no such session, or it has no checkpoint and no node id was given
    {SEQ_MISMATCH} latest seq_num differs from ARGV[5]
    {RUN_RUNNING} a run of the session is running
    {RUN_STATUS, status} the run of ARGV[12] is not the running current one
    {STATE_TOO_LARGE} / {STATE_TOO_MANY_KEYS} the merged state would pass a limit
]]
--@include constants
--@include appendCheckpoint
--@include stateJson
local meta = redis.call('HMGET', KEYS[1], 'agent_id', 'seq', 'node_id', 'run_status', 'state_bytes', 'state_keys', 'run_id')
if not meta[1] then return {NOT_FOUND} end
local seq = tonumber(meta[2] or '0')
local node = ARGV[3]
if node == '' then
  if seq == 0 then return {NOT_FOUND} end
  node = meta[3]
end
if ARGV[6] ~= '' and tonumber(ARGV[6]) ~= seq then return {SEQ_MISMATCH} end
if ARGV[7] == '1' and meta[4] == 'running' then return {RUN_RUNNING} end
if ARGV[12] ~= '' and (meta[7] ~= ARGV[12] or meta[4] ~= 'running') then return {RUN_STATUS, meta[4] or ''} end
local entry = append_checkpoint(KEYS[1], KEYS[2], KEYS[3], ARGV[2], node, ARGV[4], ARGV, 13,
  tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), meta[2], meta[5], meta[6])
if type(entry) == 'number' then return {entry} end
-- An edit between runs is activity; during a run, its creation and end are (createRun, updateRun).
if meta[4] ~= 'queued' and meta[4] ~= 'running' then redis.call('ZADD', KEYS[4], ARGV[5], ARGV[1]) end
if ARGV[11] == '1' and tonumber(redis.call('HGET', KEYS[1], 'state_keys')) <= SMALL_STATE_KEYS then
  return {1, entry, state_json(KEYS[2])}
end
return {1, entry}
