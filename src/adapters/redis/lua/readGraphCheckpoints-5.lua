--[[
  Reads LangGraph checkpoints of a thread with their channel values and pending writes: the
  named ones, or the newest of a namespace.

  KEYS[1] checkpoints zset   KEYS[2] records hash   KEYS[3] blobs hash   KEYS[4] write index zset
  KEYS[5] writes hash
  ARGV[1] "latest" and ARGV[2] the namespace, or "members" and ARGV[2..] checkpoint members

  Returns the thread's version (the records hash's `version`, "" for none) and one entry per
  stored checkpoint (missing ones are left out), in the order asked:
    {version, {member, record JSON, {blob field, value, ...}, {write field, value, ...}}, ...}
]]
--@include constants
--@include graphCheckpoint
local members = {}
if ARGV[1] == 'latest' then
  members = redis.call('ZREVRANGEBYLEX', KEYS[1], '(' .. ARGV[2] .. '\1', '[' .. ARGV[2] .. '\0', 'LIMIT', 0, 1)
else
  for i = 2, #ARGV do members[#members + 1] = ARGV[i] end
end

-- Values of `fields` in a hash as {field, value, ...}, read PATCH_BATCH at a time, absent ones left out.
local function read_fields(hash, fields)
  local out = {}
  for i = 1, #fields, PATCH_BATCH do
    local last = math.min(i + PATCH_BATCH - 1, #fields)
    local values = redis.call('HMGET', hash, unpack(fields, i, last))
    for j = i, last do
      local value = values[j - i + 1]
      if value then
        out[#out + 1] = fields[j]
        out[#out + 1] = value
      end
    end
  end
  return out
end

local entries = {redis.call('HGET', KEYS[2], 'version') or ''}
for _, member in ipairs(members) do
  local record = redis.call('HGET', KEYS[2], member)
  if record then
    local blobs = read_fields(KEYS[3], graph_blob_fields(graph_ns(member), record))
    local writes = read_fields(KEYS[5], graph_write_fields(KEYS[4], member))
    entries[#entries + 1] = {member, record, blobs, writes}
  end
end
return entries
