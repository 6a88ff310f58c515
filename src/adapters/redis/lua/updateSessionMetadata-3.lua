--[[
  Patches a session's metadata: a shallow merge, a key set to null removed (its value sent as
  ''). A write: updated_at moves, and so does the session's activity (expiry counts from it).

  KEYS[1] session hash   KEYS[2] sessions-by-activity sorted set (score = last write, ms)
  KEYS[3] sessions sorted set (score = created_at ms: the metadata index's)

  ARGV[1] session id   ARGV[2] now (RFC 3339)   ARGV[3] now (ms)
  ARGV[4..] pairs: metadata key as JSON, the value's raw JSON or '' to remove the key
    (includes/sessionMetadata.lua)

  Returns {1, the session hash as a flat array} or (codes of scripts.ts)
    {NOT_FOUND} no such session
    {METADATA_TOO_LARGE, JSON bytes} the merged metadata would pass MAX_SESSION_METADATA_BYTES;
      nothing is written
]]
--@include constants
--@include sessionMetadata
local meta = redis.call('HMGET', KEYS[1], 'agent_id', 'metadata_bytes')
if not meta[1] then return {NOT_FOUND} end
local bytes, over = metadata_after(KEYS[1], ARGV, 4, #ARGV, meta[2])
if not bytes then return {METADATA_TOO_LARGE, over} end
write_metadata(KEYS[1], ARGV, 4, #ARGV, bytes, {KEYS[3], ARGV[1], redis.call('ZSCORE', KEYS[3], ARGV[1]) or ARGV[3]})
redis.call('HSET', KEYS[1], 'updated_at', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return {1, redis.call('HGETALL', KEYS[1])}
