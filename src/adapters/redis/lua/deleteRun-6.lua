--[[
  Removes an ended run with its run indexes, schedule link and decided approvals, as
  createRun's retention drops old runs. When it is its session's current run, the session
  has none afterwards (run_id and run_status cleared) until the next.

  KEYS[1] session hash   KEYS[2] runs-of-session sorted set   KEYS[3] approvals-of-session set
  KEYS[4] schedule run links hash of the tenant   KEYS[5] decided approvals sorted set of the tenant
  KEYS[6] run hash
  ARGV[1] run id   ARGV[2] prefix of run keys   ARGV[3] prefix of approval keys
  ARGV[4] prefix of the tenant's run indexes

  Returns {0} or (codes of scripts.ts)
    {NOT_FOUND} no such run
    {RUN_STATUS, status} the run is active (queued, running, interrupted)
]]
--@include constants
--@include runStatus
--@include dropRuns
local status = redis.call('HGET', KEYS[6], 'status')
if not status then return {NOT_FOUND} end
if is_active(status) then return {RUN_STATUS, status} end
if redis.call('HGET', KEYS[1], 'run_id') == ARGV[1] then redis.call('HDEL', KEYS[1], 'run_id', 'run_status') end
drop_runs({ARGV[1]}, KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[2], ARGV[3], ARGV[4])
return {0}
