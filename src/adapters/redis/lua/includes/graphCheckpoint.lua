-- Helpers of the LangGraph checkpoint scripts (putGraphCheckpoint, readGraphCheckpoints).
-- Names inside a thread join their parts with NUL (src/adapters/shared/graph-members.ts): a
-- checkpoint is `ns NUL id`, a blob `ns NUL channel NUL version`, a write
-- `ns NUL id NUL task NUL idx`; `name NUL` .. `name \1` bounds everything under a name.

-- The thread was written: its version (the records hash's `version` field, no member's name:
-- those hold a NUL) moves on. A thread's first write (none stored, or deleted since) starts from
-- the server's clock in microseconds, so a thread written again after a delete never meets a
-- version it had before.
local function graph_touch(records_key)
  if redis.call('HINCRBY', records_key, 'version', 1) == 1 then
    local now = redis.call('TIME')
    redis.call('HSET', records_key, 'version', now[1] .. string.format('%06d', tonumber(now[2])))
  end
end

-- The checkpoint's namespace: its member up to the first NUL.
local function graph_ns(member)
  return string.sub(member, 1, string.find(member, '\0', 1, true) - 1)
end

-- The blob fields a stored record holds, one per channel version.
local function graph_blob_fields(ns, record)
  local fields = {}
  for channel, version in pairs(cjson.decode(record).v) do
    fields[#fields + 1] = ns .. '\0' .. channel .. '\0' .. version
  end
  return fields
end

-- Drops one holder of each blob field; a blob no stored checkpoint holds goes (its value and count).
local function graph_release(blobs_key, refs_key, fields)
  for _, field in ipairs(fields) do
    if redis.call('HINCRBY', refs_key, field, -1) <= 0 then
      redis.call('HDEL', refs_key, field)
      redis.call('HDEL', blobs_key, field)
    end
  end
end

-- The fields of a checkpoint's writes (write index KEYS `writeIndex`).
local function graph_write_fields(write_index, member)
  return redis.call('ZRANGEBYLEX', write_index, '[' .. member .. '\0', '(' .. member .. '\1')
end

-- Removes a checkpoint's pending writes (write index zset, writes hash).
local function graph_drop_writes(write_index, writes_key, member)
  local writes = graph_write_fields(write_index, member)
  for i = 1, #writes, PATCH_BATCH do
    local batch = {unpack(writes, i, math.min(i + PATCH_BATCH - 1, #writes))}
    redis.call('HDEL', writes_key, unpack(batch))
    redis.call('ZREM', write_index, unpack(batch))
  end
end

-- Stores pending writes, ARGV[first..] as (field, value, replace "1"/"0") triples up to `last`:
-- a stored field stays as it was unless its write replaces (LangGraph's special channels).
local function graph_put_writes(write_index, writes_key, first, last)
  for i = first, last, 3 do
    if ARGV[i + 2] == '1' then
      redis.call('HSET', writes_key, ARGV[i], ARGV[i + 1])
    else
      redis.call('HSETNX', writes_key, ARGV[i], ARGV[i + 1])
    end
    redis.call('ZADD', write_index, 0, ARGV[i])
  end
end
