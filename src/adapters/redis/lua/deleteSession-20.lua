--[[
  Deletes a session with everything of it, in one step, so nothing is left half: its hash,
  state, history, spans, runs, approvals, its entries in every index of the tenant (its
  metadata's too), the
  schedule links of its runs, and its LangGraph thread (checkpoints, blobs, writes; the
  tenant's cross-thread memory items stay). Every key is the tenant's (one Cluster slot):
  run, approval and agent-index keys are built from the prefixes in ARGV, in the same hash tag.

  KEYS[1] session hash   KEYS[2] state hash   KEYS[3] checkpoints list   KEYS[4] spans list
  KEYS[5] runs-of-session sorted set   KEYS[6] sessions sorted set
  KEYS[7] sessions-by-activity sorted set   KEYS[8] pending approvals sorted set
  KEYS[9] schedule run links hash   KEYS[10] approvals-of-session set
  KEYS[11] active-runs sorted set   KEYS[12] runs queued behind on the session (list)
  KEYS[13] decided approvals sorted set
  KEYS[14..19] the LangGraph thread of the session (keys.graphThread): checkpoints sorted set,
          records hash, blobs hash, blob-refs hash, write-index sorted set, writes hash
  KEYS[20] the tenant's LangGraph threads sorted set

  ARGV[1] session id   ARGV[2] prefix of sessions-by-agent keys   ARGV[3] prefix of run keys
  ARGV[4] prefix of approval keys
  ARGV[5] '' to delete on request (refused while a run is queued, running or interrupted), or
          a cutoff in ms to expire it (only when its last write is at or before the cutoff, no
          run is queued or running, and none waits queued behind the current one)
  ARGV[6] prefix of the tenant's run indexes

  Returns
    {1, pending approvals removed} deleted
    {NOT_FOUND} no such session (or, expiring, not idle any more)
    {SESSION_BUSY} a run is active
]]
--@include constants
--@include runStatus
--@include sessionMetadata
local meta = redis.call('HMGET', KEYS[1], 'agent_id', 'run_status')
if not meta[1] then
  redis.call('ZREM', KEYS[7], ARGV[1])
  return {NOT_FOUND}
end
local status = meta[2] or ''
if ARGV[5] == '' then
  if ACTIVE_RUN_STATUS[status] then return {SESSION_BUSY} end
else
  local touched = tonumber(redis.call('ZSCORE', KEYS[7], ARGV[1]) or '0')
  if touched > tonumber(ARGV[5]) then return {NOT_FOUND} end
  -- A run queued behind the current one keeps the session alive, even behind a paused run.
  if status == 'queued' or status == 'running' or redis.call('LLEN', KEYS[12]) > 0 then return {SESSION_BUSY} end
end
unindex_metadata(KEYS[1], KEYS[6], ARGV[1])
local pending = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[10])) do
  pending = pending + redis.call('ZREM', KEYS[8], id)
  redis.call('ZREM', KEYS[13], id)
  redis.call('DEL', ARGV[4] .. id)
end
for _, run_id in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do
  unindex_run(ARGV[6], run_id, meta[1], redis.call('HGET', ARGV[3] .. run_id, 'status') or '')
  redis.call('DEL', ARGV[3] .. run_id)
  redis.call('HDEL', KEYS[9], run_id)
  redis.call('ZREM', KEYS[11], run_id)
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[10], KEYS[12])
redis.call('DEL', KEYS[14], KEYS[15], KEYS[16], KEYS[17], KEYS[18], KEYS[19])
redis.call('ZREM', KEYS[20], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[1])
redis.call('ZREM', KEYS[7], ARGV[1])
-- A session created before its first run (agent_id '') is in no agent's index.
if meta[1] ~= '' then redis.call('ZREM', ARGV[2] .. meta[1], ARGV[1]) end
return {1, pending}
