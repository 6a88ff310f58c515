--[[
  Removes a stored assistant and its versions, and their bytes from the tenant's counter.

  KEYS[1] the tenant's assistants hash   KEYS[2] the assistant's versions hash
  KEYS[3] the tenant's graphs hash       KEYS[4] the tenant's assistant bytes counter
  ARGV[1] assistant id

  Returns {1} removed | {0} there was none
]]
local bytes = redis.call('HSTRLEN', KEYS[1], ARGV[1])
for _, version in ipairs(redis.call('HKEYS', KEYS[2])) do
  bytes = bytes + redis.call('HSTRLEN', KEYS[2], version)
end
local removed = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('DEL', KEYS[2])
if bytes > 0 then redis.call('DECRBY', KEYS[4], bytes) end
return {removed}
