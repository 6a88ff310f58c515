--[[
  Reads LangGraph checkpoints of a thread with their channel values and pending writes: the
  named ones, or the newest of a namespace.

  KEYS[1] checkpoints zset   KEYS[2] records hash   KEYS[3] blobs hash   KEYS[4] write index zset
  KEYS[5] writes hash
  ARGV[1] "latest" and ARGV[2] the namespace, or "members" and ARGV[2..] checkpoint members

  Returns one entry per stored checkpoint (missing ones are left out), in the order asked:
    {member, record JSON, {blob field, value, ...}, {write field, value, ...}}
]]
--@include graphCheckpoint
local members = {}
if ARGV[1] == 'latest' then
  members = redis.call('ZREVRANGEBYLEX', KEYS[1], '(' .. ARGV[2] .. '\1', '[' .. ARGV[2] .. '\0', 'LIMIT', 0, 1)
else
  for i = 2, #ARGV do members[#members + 1] = ARGV[i] end
end

local entries = {}
for _, member in ipairs(members) do
  local record = redis.call('HGET', KEYS[2], member)
  if record then
    local blobs = {}
    for _, field in ipairs(graph_blob_fields(graph_ns(member), record)) do
      local value = redis.call('HGET', KEYS[3], field)
      if value then
        blobs[#blobs + 1] = field
        blobs[#blobs + 1] = value
      end
    end
    local writes = {}
    for _, field in ipairs(graph_write_fields(KEYS[4], member)) do
      writes[#writes + 1] = field
      writes[#writes + 1] = redis.call('HGET', KEYS[5], field)
    end
    entries[#entries + 1] = {member, record, blobs, writes}
  end
end
return entries
