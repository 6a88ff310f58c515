--[[
  Stores a new assistant of a tenant and its version 1, within the tenant's cap. The assistant
  (its latest version as it reads) is a field of the tenant's assistants hash; its versions are
  a hash of version number -> version JSON.

  KEYS[1] the tenant's assistants hash   KEYS[2] the assistant's versions hash
  ARGV, named and ordered by SCRIPT_ARGS.createAssistant (script-args.ts):
  ARGV[1] assistant id   ARGV[2] assistant JSON   ARGV[3] version 1 JSON
  ARGV[4] the tenant's cap (assistants)

  Returns {0} stored | {1, existing assistant JSON} the id is taken: nothing written
        | {2} the tenant holds its cap already: nothing written
]]
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return {1, existing} end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then return {2} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], '1', ARGV[3])
return {0}
