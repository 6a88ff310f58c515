--[[
  Stores a LangGraph checkpoint of a thread, the blobs of its new channel versions, and keeps
  the newest `retain` checkpoints of its namespace: an older one goes, a blob goes once no
  stored checkpoint holds its version (blobRefs counts the holders), and so do the writes of
  every checkpoint older than the oldest kept (LangGraph may send a checkpoint's writes before
  the checkpoint itself, or after it was pruned: those go here too).

  The subgraph namespaces of the thread (every namespace but the root "") share one more bound
  of `retain` checkpoints, the newest by checkpoint id (ids sort by time): each subgraph task
  has its own namespace, so a bound per namespace alone would let the thread grow with every
  run. Nothing is written when the whole state (the record and every channel value it holds,
  stored or new) passes the cap, or when the session is required and gone.

  KEYS[1] tenant's threads zset   KEYS[2] thread's checkpoints zset   KEYS[3] records hash
  KEYS[4] blobs hash   KEYS[5] blob refs hash   KEYS[6] write index zset   KEYS[7] writes hash
  KEYS[8] the thread's session hash
  ARGV[1] thread id   ARGV[2] checkpoint member (`ns NUL id`)   ARGV[3] record JSON ({v = versions, ...})
  ARGV[4] retain   ARGV[5] largest state in bytes   ARGV[6] '1' when the session must exist
  ARGV[7] bytes of the record's checkpoint and metadata   ARGV[8] n, the number of pending writes
  ARGV[9..8+3n] write field, value, replace ("1"/"0"), ... (stored first, as putGraphWrites;
  kept when the state is refused for its size)   ARGV[9+3n..] blob field, value, blob field, value, ...

  Returns {0, checkpoints pruned}, or (codes of scripts.ts)
    {THREAD_GONE, thread id} the session is required and gone
    {GRAPH_STATE_TOO_LARGE, bytes, cap} the state would pass the cap
]]
--@include constants
--@include graphCheckpoint
local member, record, retain = ARGV[2], ARGV[3], tonumber(ARGV[4])
local ns = graph_ns(member)
if ARGV[6] == '1' and redis.call('EXISTS', KEYS[8]) == 0 then return {THREAD_GONE, ARGV[1]} end
local first_blob = 9 + 3 * tonumber(ARGV[8])
if first_blob > 9 then
  graph_touch(KEYS[3])
  graph_put_writes(KEYS[6], KEYS[7], 9, first_blob - 1)
end

-- The whole state: the record, the new blobs, and the stored blobs of the versions it keeps.
local new_blobs = {}
for i = first_blob, #ARGV, 2 do new_blobs[ARGV[i]] = #ARGV[i + 1] end
local bytes = tonumber(ARGV[7])
for _, field in ipairs(graph_blob_fields(ns, record)) do
  bytes = bytes + (new_blobs[field] or redis.call('HSTRLEN', KEYS[4], field))
end
if bytes > tonumber(ARGV[5]) then return {GRAPH_STATE_TOO_LARGE, bytes, ARGV[5]} end

-- Holders are counted before the replaced record lets go, so a blob both hold stays.
local function release(fields)
  graph_release(KEYS[4], KEYS[5], fields)
end
for _, field in ipairs(graph_blob_fields(ns, record)) do redis.call('HINCRBY', KEYS[5], field, 1) end
for i = first_blob, #ARGV, 2 do redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1]) end
graph_touch(KEYS[3])
local replaced = redis.call('HGET', KEYS[3], member)
if replaced then release(graph_blob_fields(ns, replaced)) end
redis.call('HSET', KEYS[3], member, record)
redis.call('ZADD', KEYS[2], 0, member)
redis.call('ZADD', KEYS[1], 0, ARGV[1])

-- Removes a stored checkpoint: its hold on its blobs, its record, and its writes when asked.
local function drop(old, with_writes)
  release(graph_blob_fields(graph_ns(old), redis.call('HGET', KEYS[3], old)))
  redis.call('HDEL', KEYS[3], old)
  redis.call('ZREM', KEYS[2], old)
  if with_writes then graph_drop_writes(KEYS[6], KEYS[7], old) end
end

local pruned = 0
local min, max = '[' .. ns .. '\0', '(' .. ns .. '\1'
local excess = redis.call('ZLEXCOUNT', KEYS[2], min, max) - retain
if excess > 0 then
  for _, old in ipairs(redis.call('ZRANGEBYLEX', KEYS[2], min, max, 'LIMIT', 0, excess)) do drop(old, false) end
  pruned = excess
  -- Writes of every checkpoint older than the oldest kept go, stored before or after their checkpoint.
  local oldest = redis.call('ZRANGEBYLEX', KEYS[2], min, max, 'LIMIT', 0, 1)[1]
  local stale = redis.call('ZRANGEBYLEX', KEYS[6], min, '(' .. oldest)
  for i = 1, #stale, PATCH_BATCH do
    redis.call('HDEL', KEYS[7], unpack(stale, i, math.min(i + PATCH_BATCH - 1, #stale)))
  end
  redis.call('ZREMRANGEBYLEX', KEYS[6], min, '(' .. oldest)
end

-- The subgraph namespaces (members after the root's `NUL …`) share `retain`: the oldest ids go.
if ns ~= '' then
  local subgraphs = redis.call('ZRANGEBYLEX', KEYS[2], '[\1', '+')
  if #subgraphs > retain then
    local id_of = function(m) return string.sub(m, string.find(m, '\0', 1, true) + 1) end
    table.sort(subgraphs, function(a, b) return id_of(a) < id_of(b) end)
    for i = 1, #subgraphs - retain do drop(subgraphs[i], true) end
    pruned = pruned + #subgraphs - retain
  end
end
return {0, pruned}
