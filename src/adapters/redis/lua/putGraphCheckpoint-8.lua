--[[
  Stores a LangGraph checkpoint of a thread, the blobs of its new channel versions, and keeps
  the newest `retain` checkpoints of its namespace: an older one goes, a blob goes once no
  stored checkpoint holds its version (blobRefs counts the holders), and so do the writes of
  every checkpoint older than the oldest kept (LangGraph may send a checkpoint's writes before
  the checkpoint itself, or after it was pruned: those go here too).

  KEYS[1] tenant's threads zset   KEYS[2] thread's checkpoints zset   KEYS[3] records hash
  KEYS[4] blobs hash   KEYS[5] blob refs hash   KEYS[6] write index zset   KEYS[7] writes hash
  ARGV[1] thread id   ARGV[2] checkpoint member (`ns NUL id`)   ARGV[3] record JSON ({v = versions, ...})
  ARGV[4] retain   ARGV[5..] blob field, value, blob field, value, ...

  Returns {0, checkpoints pruned}
]]
--@include constants
--@include graphCheckpoint
local member, record, retain = ARGV[2], ARGV[3], tonumber(ARGV[4])
local ns = graph_ns(member)

-- Holders are counted before the replaced record lets go, so a blob both hold stays.
local function release(fields)
  graph_release(KEYS[4], KEYS[5], fields)
end
for _, field in ipairs(graph_blob_fields(ns, record)) do redis.call('HINCRBY', KEYS[5], field, 1) end
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1]) end
local replaced = redis.call('HGET', KEYS[3], member)
if replaced then release(graph_blob_fields(ns, replaced)) end
redis.call('HSET', KEYS[3], member, record)
redis.call('ZADD', KEYS[2], 0, member)
redis.call('ZADD', KEYS[1], 0, ARGV[1])

local min, max = '[' .. ns .. '\0', '(' .. ns .. '\1'
local excess = redis.call('ZLEXCOUNT', KEYS[2], min, max) - retain
if excess <= 0 then return {0, 0} end
for _, old in ipairs(redis.call('ZRANGEBYLEX', KEYS[2], min, max, 'LIMIT', 0, excess)) do
  release(graph_blob_fields(ns, redis.call('HGET', KEYS[3], old)))
  redis.call('HDEL', KEYS[3], old)
  redis.call('ZREM', KEYS[2], old)
end
local oldest = redis.call('ZRANGEBYLEX', KEYS[2], min, max, 'LIMIT', 0, 1)[1]
local stale = redis.call('ZRANGEBYLEX', KEYS[6], min, '(' .. oldest)
for i = 1, #stale, PATCH_BATCH do
  redis.call('HDEL', KEYS[7], unpack(stale, i, math.min(i + PATCH_BATCH - 1, #stale)))
end
redis.call('ZREMRANGEBYLEX', KEYS[6], min, '(' .. oldest)
return {0, excess}
