--[[
  Stores a pending approval request and marks its run interrupted, in one step, so a pending
  approval and an interrupted run never exist without each other. Storing the same id again
  (a retried interrupt) changes nothing.

  Every key is the tenant's (one Cluster slot); the caller maintains the global gauge counter.

  KEYS[1] approval hash
  KEYS[2] pending approvals sorted set of the tenant
  KEYS[3] run hash
  KEYS[3] session hash

  ARGV[1] requested_at (ms)   ARGV[2] now (RFC 3339)   ARGV[3..] field/value pairs of the approval

  Returns {created (0|1), approval hash as a flat array}.
]]
local created = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  created = 1
  local fields = {}
  for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
  redis.call('HSET', KEYS[1], unpack(fields))
  local id = redis.call('HGET', KEYS[1], 'id')
  redis.call('ZADD', KEYS[2], ARGV[1], id)
  redis.call('HSET', KEYS[3], 'status', 'interrupted', 'approval_id', id, 'updated_at', ARGV[2])
  if redis.call('HGET', KEYS[4], 'run_id') == redis.call('HGET', KEYS[3], 'id') then
    redis.call('HSET', KEYS[4], 'run_status', 'interrupted', 'updated_at', ARGV[2])
  end
end
return {created, redis.call('HGETALL', KEYS[1])}
