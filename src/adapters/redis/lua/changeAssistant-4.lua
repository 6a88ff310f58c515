--[[
  Changes a stored assistant when it still has the versions its caller read: adds a version
  (an update) and makes it the latest, or only replaces the latest (set latest: an existing
  version's fields). A change whose caller read another count of versions is stale: the caller
  reads again and retries.

  KEYS[1] the tenant's assistants hash   KEYS[2] the assistant's versions hash
  ARGV, named and ordered by SCRIPT_ARGS.changeAssistant (script-args.ts):
  ARGV[1] assistant id   ARGV[2] the assistant JSON as it will read
  ARGV[3] the new version's JSON ('' to add none)   ARGV[4] versions the caller read
  ARGV[5] the most versions an assistant may have

  Returns {0} changed | {1} no such assistant | {2} stale | {3} past the versions cap
  (nothing written but {0})
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {1} end
local versions = redis.call('HLEN', KEYS[2])
if versions ~= tonumber(ARGV[4]) then return {2} end
if ARGV[3] ~= '' then
  if versions >= tonumber(ARGV[5]) then return {3} end
  redis.call('HSET', KEYS[2], tostring(versions + 1), ARGV[3])
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return {0}
