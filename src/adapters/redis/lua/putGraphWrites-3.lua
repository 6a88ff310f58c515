--[[
  Stores pending writes against a stored LangGraph checkpoint. A write whose field (task and
  index) is stored already stays as it was, unless its index is negative (LangGraph's special
  channels: errors, interrupts), which replaces.

  KEYS[1] records hash   KEYS[2] write index zset   KEYS[3] writes hash
  ARGV[1] checkpoint member (`ns NUL id`)   ARGV[2..] field, value, replace ("1"/"0"), ...

  Returns {0} stored | {1} the checkpoint is not stored (never was, pruned, thread deleted)
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {1} end
for i = 2, #ARGV, 3 do
  if ARGV[i + 2] == '1' then
    redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
  else
    redis.call('HSETNX', KEYS[3], ARGV[i], ARGV[i + 1])
  end
  redis.call('ZADD', KEYS[2], 0, ARGV[i])
end
return {0}
