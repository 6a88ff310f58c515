--[[
  Removes a stored assistant and its versions.

  KEYS[1] the tenant's assistants hash   KEYS[2] the assistant's versions hash
  ARGV[1] assistant id

  Returns {1} removed | {0} there was none
]]
local removed = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return {removed}
