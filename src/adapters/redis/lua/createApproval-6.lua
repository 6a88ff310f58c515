--[[
  Stores a pending approval request and marks its run interrupted, in one step, so a pending
  approval and an interrupted run never exist without each other. Storing the same id again
  (a retried interrupt) changes nothing, except that a pending one pauses its running run again
  (a run resumed while other requests of its pause are unanswered). A run that is no longer running (cancelled while its
  node asked) gets no request: the run must be active.

  Every key is the tenant's (one Cluster slot); the caller maintains the global gauge counter
  and the expiry timer.

  KEYS[1] approval hash
  KEYS[2] pending approvals sorted set of the tenant
  KEYS[3] run hash
  KEYS[4] session hash
  KEYS[5] approvals-of-session set (deleting the session deletes them)
  KEYS[6] active-runs sorted set of the tenant

  ARGV[1] requested_at (ms)   ARGV[2] now (RFC 3339)   ARGV[3] run id   ARGV[4] now (ms)
  ARGV[5] prefix of the tenant's run indexes
  ARGV[6..] field/value pairs of the approval

  Returns {created (0|1), approval hash as a flat array}, or (codes of scripts.ts)
    {RUN_STATUS, current status} the run has ended
]]
--@include constants
--@include runStatus
local created = 0
local existing = redis.call('HGET', KEYS[1], 'status')
if existing == 'pending' then
  -- Asked again while still pending (a run resumed while other requests of its pause remain
  -- unanswered): a running run pauses on it again.
  local status = redis.call('HGET', KEYS[3], 'status')
  if status == 'running' or status == 'queued' then
    set_run_status(KEYS[3], KEYS[4], KEYS[6], ARGV[5], ARGV[3], 'interrupted', ARGV[2], ARGV[4], { 'approval_id', redis.call('HGET', KEYS[1], 'id') })
  end
elseif not existing then
  local status = redis.call('HGET', KEYS[3], 'status')
  if status and not is_active(status) then return {RUN_STATUS, status} end
  created = 1
  local fields = {}
  for i = 6, #ARGV do fields[#fields + 1] = ARGV[i] end
  redis.call('HSET', KEYS[1], unpack(fields))
  local id = redis.call('HGET', KEYS[1], 'id')
  redis.call('ZADD', KEYS[2], ARGV[1], id)
  redis.call('SADD', KEYS[5], id)
  set_run_status(KEYS[3], KEYS[4], KEYS[6], ARGV[5], ARGV[3], 'interrupted', ARGV[2], ARGV[4], { 'approval_id', id })
end
return {created, redis.call('HGETALL', KEYS[1])}
