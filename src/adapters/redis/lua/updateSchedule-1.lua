--[[
  Changes fields of an existing schedule in one step, so a schedule deleted meanwhile is not
  written back as a partial hash.

  KEYS[1] schedule hash

  ARGV[2i-1] field   ARGV[2i] its new value ('' removes the field)

  Returns
    {} no such schedule
    the schedule hash as HGETALL answers it (field, value, …), once changed
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
for i = 1, #ARGV, 2 do
  if ARGV[i + 1] == '' then
    redis.call('HDEL', KEYS[1], ARGV[i])
  else
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
return redis.call('HGETALL', KEYS[1])
