--[[
  Stores a new schedule unless its tenant already holds the most it may
  (SERVICE_SCHEDULES_MAX_PER_TENANT): the count and the write in one step, so concurrent
  creations never pass the cap.

  KEYS[1] schedule hash
  KEYS[2] schedules sorted set of the tenant

  ARGV[1] schedule id   ARGV[2] created_at (ms)   ARGV[3] cap ('' for none)
  ARGV[4], ARGV[5], … the hash's field, value pairs

  Returns (outcomes, not failures)
    {1} stored
    {0, count} the tenant holds `count` schedules, the cap or more; nothing written
]]
if ARGV[3] ~= '' then
  local count = redis.call('ZCARD', KEYS[2])
  if count >= tonumber(ARGV[3]) then return {0, count} end
end
for i = 4, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return {1}
