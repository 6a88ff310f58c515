--[[
  Creates or replaces a LangGraph memory item of a tenant, within the tenant's byte cap. A
  stored item is `created|updated|value JSON` (ms); an item takes its member's and its record's
  bytes. Replacing keeps `created` and the item's place; a new item goes last in its namespace.
  A replacement that does not grow is always allowed.

  KEYS[1] items hash   KEYS[2] the namespace's item order zset (key -> place)
  KEYS[3] namespaces zset   KEYS[4] namespace counts hash   KEYS[5] bytes counter
  ARGV[1] member (`namespace NUL key`)   ARGV[2] namespace name   ARGV[3] value JSON
  ARGV[4] now (ms)   ARGV[5] the tenant's byte cap   ARGV[6] key

  Returns {0} stored | {1} past the cap: nothing written
]]
local member, ns = ARGV[1], ARGV[2]
local old = redis.call('HGET', KEYS[1], member)
local created = ARGV[4]
local grows = 0
if old then
  created = string.sub(old, 1, string.find(old, '|', 1, true) - 1)
  grows = -(#member + #old)
end
local record = created .. '|' .. ARGV[4] .. '|' .. ARGV[3]
grows = grows + #member + #record
if grows > 0 and tonumber(redis.call('GET', KEYS[5]) or '0') + grows > tonumber(ARGV[5]) then
  return {1}
end
redis.call('HSET', KEYS[1], member, record)
redis.call('INCRBY', KEYS[5], grows)
if not old then
  local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
  redis.call('ZADD', KEYS[2], (tonumber(last[2]) or 0) + 1, ARGV[6])
  if redis.call('HINCRBY', KEYS[4], ns, 1) == 1 then redis.call('ZADD', KEYS[3], 0, ns) end
end
return {0}
