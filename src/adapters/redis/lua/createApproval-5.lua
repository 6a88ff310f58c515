--[[
  Stores a pending approval request and marks its run interrupted, in one step, so a pending
  approval and an interrupted run never exist without each other. Storing the same id again
  (a retried interrupt) changes nothing.

  Every key is the tenant's (one Cluster slot); the caller maintains the global gauge counter.

  KEYS[1] approval hash
  KEYS[2] pending approvals sorted set of the tenant
  KEYS[3] run hash
  KEYS[4] session hash
  KEYS[5] approvals-of-session set (deleting the session deletes them)

  ARGV[1] requested_at (ms)   ARGV[2] now (RFC 3339)   ARGV[3] run id
  ARGV[4..] field/value pairs of the approval

  Returns {created (0|1), approval hash as a flat array}.
]]
--@include constants
--@include runStatus
local created = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  created = 1
  local fields = {}
  for i = 4, #ARGV do fields[#fields + 1] = ARGV[i] end
  redis.call('HSET', KEYS[1], unpack(fields))
  local id = redis.call('HGET', KEYS[1], 'id')
  redis.call('ZADD', KEYS[2], ARGV[1], id)
  redis.call('SADD', KEYS[5], id)
  set_run_status(KEYS[3], KEYS[4], ARGV[3], 'interrupted', ARGV[2], { 'approval_id', id })
end
return {created, redis.call('HGETALL', KEYS[1])}
