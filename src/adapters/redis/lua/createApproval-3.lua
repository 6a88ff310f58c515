--[[
  Stores a pending approval request once (a retried interrupt with the same id is harmless).

  KEYS[1] approval hash
  KEYS[2] pending approvals sorted set of the tenant
  KEYS[3] global pending-approval counter

  ARGV[1] requested_at (ms)   ARGV[2..] field/value pairs of the approval

  Returns the approval hash as a flat array.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  local fields = {}
  for i = 2, #ARGV do fields[#fields + 1] = ARGV[i] end
  redis.call('HSET', KEYS[1], unpack(fields))
  redis.call('ZADD', KEYS[2], ARGV[1], redis.call('HGET', KEYS[1], 'id'))
  redis.call('INCR', KEYS[3])
end
return redis.call('HGETALL', KEYS[1])
