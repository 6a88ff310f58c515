--[[
  Stores a new assistant of a tenant and its version 1, within the tenant's caps. The assistant
  (its latest version as it reads) is a field of the tenant's assistants hash; its versions are
  a hash of version number -> version JSON; its graph is a field of the graphs hash (what a
  count by graph reads); the bytes counter holds the bytes of every assistant and version JSON.

  KEYS[1] the tenant's assistants hash   KEYS[2] the assistant's versions hash
  KEYS[3] the tenant's graphs hash       KEYS[4] the tenant's assistant bytes counter
  ARGV, named and ordered by SCRIPT_ARGS.createAssistant (script-args.ts):
  ARGV[1] assistant id   ARGV[2] assistant JSON   ARGV[3] version 1 JSON
  ARGV[4] the tenant's cap (assistants)   ARGV[5] graph id   ARGV[6] the tenant's cap (bytes)

  Returns {0} stored | {1, existing assistant JSON} the id is taken: nothing written
        | {2} the tenant holds its cap already | {3} past the bytes cap: nothing written
]]
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return {1, existing} end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then return {2} end
local grows = #ARGV[2] + #ARGV[3]
if tonumber(redis.call('GET', KEYS[4]) or '0') + grows > tonumber(ARGV[6]) then return {3} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[5])
redis.call('INCRBY', KEYS[4], grows)
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], '1', ARGV[3])
return {0}
