--[[
  Sets a run's status (and error), mirroring it on its session when it is the session's
  current run. With ARGV[4] set, applies only when the run's status is one of the listed ones.

  KEYS[1] run hash
  KEYS[2] session hash

  ARGV[1] status   ARGV[2] error ('' clears it)   ARGV[3] now (RFC 3339)
  ARGV[4] comma-separated statuses the run must have now, '' for any

  Returns the run hash as a flat array, or
    {-1} no such run
    {-2, current status} the run's status is not one of ARGV[4]
]]
local current = redis.call('HGET', KEYS[1], 'status')
if not current then return {-1} end
if ARGV[4] ~= '' and not string.find(',' .. ARGV[4] .. ',', ',' .. current .. ',', 1, true) then
  return {-2, current}
end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'updated_at', ARGV[3])
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], 'error')
else
  redis.call('HSET', KEYS[1], 'error', ARGV[2])
end
if redis.call('HGET', KEYS[2], 'run_id') == redis.call('HGET', KEYS[1], 'id') then
  redis.call('HSET', KEYS[2], 'run_status', ARGV[1], 'updated_at', ARGV[3])
end
return redis.call('HGETALL', KEYS[1])
