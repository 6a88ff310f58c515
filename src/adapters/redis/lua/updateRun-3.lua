--[[
  Sets a run's status (and error), mirroring it on its session when it is the session's
  current run. With ARGV[4] set, applies only when the run's status is one of the listed ones.

  KEYS[1] run hash
  KEYS[2] session hash
  KEYS[3] sessions-by-activity sorted set of the tenant (a run's end is its session's activity)

  ARGV[1] status   ARGV[2] error ('' clears it)   ARGV[3] now (RFC 3339)
  ARGV[4] comma-separated statuses the run must have now, '' for any   ARGV[5] run id
  ARGV[6] session id   ARGV[7] now (ms)

  Returns the run hash as a flat array, or (codes of scripts.ts)
    {NOT_FOUND} no such run
    {RUN_STATUS, current status} the run's status is not one of ARGV[4]
]]
--@include constants
--@include runStatus
local current = redis.call('HGET', KEYS[1], 'status')
if not current then return {NOT_FOUND} end
if ARGV[4] ~= '' and not string.find(',' .. ARGV[4] .. ',', ',' .. current .. ',', 1, true) then
  return {RUN_STATUS, current}
end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], 'error')
  set_run_status(KEYS[1], KEYS[2], ARGV[5], ARGV[1], ARGV[3])
else
  set_run_status(KEYS[1], KEYS[2], ARGV[5], ARGV[1], ARGV[3], { 'error', ARGV[2] })
end
if not is_active(ARGV[1]) then redis.call('ZADD', KEYS[3], ARGV[7], ARGV[6]) end
return redis.call('HGETALL', KEYS[1])
