--[[
  Removes a LangGraph memory item of a tenant (nothing when absent), giving its bytes back, and
  its namespace once it holds no item.

  KEYS[1] items hash   KEYS[2] the namespace's item order zset (key -> place)
  KEYS[3] namespaces zset   KEYS[4] namespace counts hash   KEYS[5] bytes counter
  ARGV[1] member (`namespace NUL key`)   ARGV[2] namespace name   ARGV[3] key

  Returns {0, 1 when an item was removed else 0}
]]
local member, ns = ARGV[1], ARGV[2]
local old = redis.call('HGET', KEYS[1], member)
if not old then return {0, 0} end
redis.call('HDEL', KEYS[1], member)
redis.call('ZREM', KEYS[2], ARGV[3])
redis.call('DECRBY', KEYS[5], #member + #old)
if redis.call('HINCRBY', KEYS[4], ns, -1) <= 0 then
  redis.call('HDEL', KEYS[4], ns)
  redis.call('ZREM', KEYS[3], ns)
end
return {0, 1}
