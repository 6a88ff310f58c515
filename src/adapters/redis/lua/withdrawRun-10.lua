--[[
  Takes a run's waiting jobs (pending, parked or delayed) out of the queue: its run ended before
  its turn. Jobs already admitted stay (their worker sees the run ended and releases them). A
  job that held a slot of its agent gives it back: the agent's next parked job takes it, and
  jobs are then admitted while worker slots are free.

  KEYS[1] jobs   KEYS[2] ring   KEYS[3] credit   KEYS[4] queued   KEYS[5] running
  KEYS[6] admitted   KEYS[7] delayed   KEYS[8] workers   KEYS[9] agents   KEYS[10] held
  (includes/admitRuns.lua says what each holds)

  ARGV[1] prefix of the tenants' pending lists   ARGV[2] policy (JSON)
  ARGV[3..5] how a job admitted is handed to BullMQ (includes/admitRuns.lua)   ARGV[6..n] job ids

  Returns the JSON of each job admitted and not handed to BullMQ here (includes/admitRuns.lua).
]]
--@include admitRuns
local prefix = ARGV[1]
local freed = {}
for i = 6, #ARGV do
  local id = ARGV[i]
  local data = redis.call('HGET', KEYS[1], id)
  if data then
    local job = cjson.decode(data)
    local tenant = job.tenant
    redis.call('HDEL', KEYS[1], id)
    add_count(KEYS[4], tenant, '-1')
    if redis.call('ZREM', KEYS[7], id) == 0 then
      local list = prefix .. tenant
      if redis.call('LREM', list, '1', id) == 0 then
        local parked = parked_list(job.agent_id, tenant)
        if redis.call('LREM', parked, '1', id) == 1 and redis.call('LLEN', parked) == 0 then redis.call('LREM', agent_ring(job.agent_id), '1', tenant) end
      end
      if redis.call('LLEN', list) == 0 then leave_ring(tenant) end
    end
    if redis.call('SREM', KEYS[10], id) == 1 then
      add_count(KEYS[9], job.agent_id, '-1')
      freed[#freed + 1] = job.agent_id
    end
  end
end
if #freed == 0 then return {} end
local policy = read_policy()
for _, agent in ipairs(freed) do fill_agent(prefix, policy, agent) end
return admit(prefix, server_now(), policy)
