--[[
  Changes a stored assistant when it still has the versions its caller read: adds a version
  (an update) and makes it the latest, or only replaces the latest (set latest: an existing
  version's fields). A change whose caller read another count of versions is stale: the caller
  reads again and retries. A change that grows the tenant's bytes past the cap is refused; one
  that does not grow them always passes.

  KEYS[1] the tenant's assistants hash   KEYS[2] the assistant's versions hash
  KEYS[3] the tenant's graphs hash       KEYS[4] the tenant's assistant bytes counter
  ARGV, named and ordered by SCRIPT_ARGS.changeAssistant (script-args.ts):
  ARGV[1] assistant id   ARGV[2] the assistant JSON as it will read
  ARGV[3] the new version's JSON ('' to add none)   ARGV[4] versions the caller read
  ARGV[5] the most versions an assistant may have   ARGV[6] graph id as it will read
  ARGV[7] the tenant's cap (bytes)

  Returns {0} changed | {1} no such assistant | {2} stale | {3} past the versions cap
  | {4} past the bytes cap (nothing written but {0})
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {1} end
local versions = redis.call('HLEN', KEYS[2])
if versions ~= tonumber(ARGV[4]) then return {2} end
if ARGV[3] ~= '' and versions >= tonumber(ARGV[5]) then return {3} end
local grows = #ARGV[2] - redis.call('HSTRLEN', KEYS[1], ARGV[1]) + #ARGV[3]
if grows > 0 and tonumber(redis.call('GET', KEYS[4]) or '0') + grows > tonumber(ARGV[7]) then return {4} end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], tostring(versions + 1), ARGV[3]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[6])
redis.call('INCRBY', KEYS[4], grows)
return {0}
