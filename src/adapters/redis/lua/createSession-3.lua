--[[
  Creates a session before its first run: bound to no agent yet (agent_id ''), with its
  metadata, no checkpoint and no run. It is listed and in the activity index, so expiry removes
  it when idle; its first run binds it to the run's agent (createRun).

  KEYS[1] session hash   KEYS[2] sessions sorted set (score = created_at ms)
  KEYS[3] sessions-by-activity sorted set (score = last write, ms)

  ARGV[1] session id   ARGV[2] now (RFC 3339)   ARGV[3] now (ms)
  ARGV[4..] pairs: metadata key as JSON, the value's raw JSON (includes/sessionMetadata.lua,
    which indexes them)

  Returns {1, the session hash as a flat array} or (codes of scripts.ts)
    {SESSION_EXISTS} the session exists (bound to an agent or not)
    {METADATA_TOO_LARGE, JSON bytes} the metadata passes MAX_SESSION_METADATA_BYTES; nothing is written
]]
--@include constants
--@include sessionMetadata
if redis.call('HEXISTS', KEYS[1], 'agent_id') == 1 then return {SESSION_EXISTS} end
local bytes, over = metadata_after(KEYS[1], ARGV, 4, #ARGV, 0)
if not bytes then return {METADATA_TOO_LARGE, over} end
redis.call('HSET', KEYS[1], 'agent_id', '', 'created_at', ARGV[2], 'updated_at', ARGV[2])
write_metadata(KEYS[1], ARGV, 4, #ARGV, bytes, {KEYS[2], ARGV[1], ARGV[3]})
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return {1, redis.call('HGETALL', KEYS[1])}
