--[[
  A job admitted is done for good (completed, or failed with no retry left): its slot goes back
  to its tenant's count and its hand mark goes, then jobs are admitted while slots are free.

  KEYS[1] jobs   KEYS[2] ring   KEYS[3] credit   KEYS[4] queued   KEYS[5] running
  KEYS[6] admitted   KEYS[7] delayed   KEYS[8] workers   (includes/admitRuns.lua says what each holds)
  KEYS[9] handed (lua/handRuns-2.lua)

  ARGV[1] prefix of the tenants' pending lists   ARGV[2] policy (JSON)   ARGV[3] job id

  Returns the JSON of each job admitted.
]]
--@include admitRuns
local prefix, now, policy = ARGV[1], server_now(), cjson.decode(ARGV[2])
local data = redis.call('HGET', KEYS[6], ARGV[3])
if data then
  redis.call('HDEL', KEYS[6], ARGV[3])
  add_count(KEYS[5], cjson.decode(data).tenant, -1)
end
redis.call('SREM', KEYS[9], ARGV[3])
return admit(prefix, now, policy)
