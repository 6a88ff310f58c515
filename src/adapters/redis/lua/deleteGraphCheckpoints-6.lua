--[[
  Removes the named LangGraph checkpoints of a thread with their pending writes; a blob goes
  once no stored checkpoint holds its version (blobRefs counts the holders). Members not
  stored are skipped.

  KEYS[1] thread's checkpoints zset   KEYS[2] records hash   KEYS[3] blobs hash
  KEYS[4] blob refs hash   KEYS[5] write index zset   KEYS[6] writes hash
  ARGV[1..] checkpoint members (`ns NUL id`)

  Returns {0, checkpoints removed}
]]
--@include constants
--@include graphCheckpoint
local removed = 0
graph_touch(KEYS[2])
for _, member in ipairs(ARGV) do
  local record = redis.call('HGET', KEYS[2], member)
  if record then
    graph_release(KEYS[3], KEYS[4], graph_blob_fields(graph_ns(member), record))
    redis.call('HDEL', KEYS[2], member)
    redis.call('ZREM', KEYS[1], member)
    removed = removed + 1
  end
  graph_drop_writes(KEYS[5], KEYS[6], member)
end
return {0, removed}
