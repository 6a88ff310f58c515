--[[
  Puts sessions written before the metadata index (includes/sessionMetadata.lua) into it, a
  page at a time, newest first; each page atomic, so a session deleted or changed meanwhile is
  either not indexed (gone) or indexed as it stands (its own write keeps the index after).
  The cursor is a created_at score: every session at that score is indexed again (sessions of
  one millisecond never straddle pages unseen), then up to ARGV[3] older ones.

  KEYS[1] sessions sorted set (score = created_at ms)
  KEYS[2] marker string, set once the walk is done

  ARGV[1] prefix of the session hashes   ARGV[2] cursor ('' to start at the newest)
  ARGV[3] page size

  Returns the next cursor, or '' once every session is indexed (the marker is then set).
]]
--@include constants
--@include sessionMetadata
local function index(id, score)
  for _, set in ipairs(metadata_index_sets(ARGV[1] .. id, KEYS[1])) do redis.call('ZADD', set, score, id) end
end
local below = '+inf'
if ARGV[2] ~= '' then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[2])) do index(id, ARGV[2]) end
  below = '(' .. ARGV[2]
end
local page = redis.call('ZREVRANGEBYSCORE', KEYS[1], below, '-inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
for i = 1, #page, 2 do index(page[i], page[i + 1]) end
if #page < 2 * tonumber(ARGV[3]) then
  redis.call('SET', KEYS[2], '1')
  return ''
end
return page[#page]
