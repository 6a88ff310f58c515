--[[
  A job admitted is done for good (completed, or failed with no retry left): its slot goes back
  to its tenant's count (and to its agent's, whose next parked job then takes it) and its hand
  mark goes, then jobs are admitted while slots are free.

  KEYS[1] jobs   KEYS[2] ring   KEYS[3] credit   KEYS[4] queued   KEYS[5] running
  KEYS[6] admitted   KEYS[7] delayed   KEYS[8] workers   KEYS[9] agents   KEYS[10] held
  (includes/admitRuns.lua says what each holds)
  KEYS[11] handed (lua/handRuns-2.lua)

  ARGV[1] prefix of the tenants' pending lists   ARGV[2] policy (JSON)
  ARGV[3..5] how a job admitted is handed to BullMQ (includes/admitRuns.lua)   ARGV[6] job id
  ARGV[7] its tenant and ARGV[8] its agent, as in its JSON (the worker that ran it has them), or
  none: the job's JSON is then read from KEYS[6]

  Returns the JSON of each job admitted and not handed to BullMQ here (includes/admitRuns.lua).

  At light load (a run ends, none waits) this is 5 or 6 commands: the policy is decoded, and the
  server's clock read, only when an agent has a cap or a job may be admitted.
]]
--@include admitRuns
local prefix, id, tenant, agent = ARGV[1], ARGV[6], ARGV[7], ARGV[8]
if not tenant or tenant == '' then
  local data = redis.call('HGET', KEYS[6], id)
  if data then
    local job = cjson.decode(data)
    tenant, agent = job.tenant, job.agent_id
  end
end
if tenant and tenant ~= '' and redis.call('HDEL', KEYS[6], id) == 1 then
  add_count(KEYS[5], tenant, '-1')
  if caps_agents() and agent_cap(read_policy(), agent) > 0 then free_agent_slot(prefix, read_policy(), agent) end
end
redis.call('SREM', KEYS[11], id)
-- No tenant waiting, no job delayed: nothing to admit.
if redis.call('EXISTS', KEYS[2], KEYS[7]) == 0 then return {} end
return admit(prefix, server_now(), read_policy())
