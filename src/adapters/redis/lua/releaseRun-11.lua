--[[
  A job admitted is done for good (completed, or failed with no retry left): its slot goes back
  to its tenant's count (and to its agent's, whose next parked job then takes it) and its hand
  mark goes, then jobs are admitted while slots are free.

  KEYS[1] jobs   KEYS[2] ring   KEYS[3] credit   KEYS[4] queued   KEYS[5] running
  KEYS[6] admitted   KEYS[7] delayed   KEYS[8] workers   KEYS[9] agents   KEYS[10] held
  (includes/admitRuns.lua says what each holds)
  KEYS[11] handed (lua/handRuns-2.lua)

  ARGV[1] prefix of the tenants' pending lists   ARGV[2] policy (JSON)   ARGV[3] job id

  Returns the JSON of each job admitted and not handed to BullMQ here (includes/admitRuns.lua).
]]
--@include admitRuns
local prefix, now, policy = ARGV[1], server_now(), cjson.decode(ARGV[2])
local data = redis.call('HGET', KEYS[6], ARGV[3])
if data then
  redis.call('HDEL', KEYS[6], ARGV[3])
  local job = cjson.decode(data)
  add_count(KEYS[5], job.tenant, -1)
  if agent_cap(policy, job.agent_id) > 0 then free_agent_slot(prefix, policy, job.agent_id) end
end
redis.call('SREM', KEYS[11], ARGV[3])
return admit(prefix, now, policy)
