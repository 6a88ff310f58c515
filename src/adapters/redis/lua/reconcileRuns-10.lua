--[[
  Recomputes what could drift (after a failover lost writes): each tenant's queued and running
  counts from the jobs waiting and admitted, each capped agent's slots from its jobs admitted and
  its jobs waiting that hold one, the ring from the tenants' pending lists, and each agent's ring
  from its parked lists; an agent's free slots then go to its parked jobs (all of them when it
  has no cap now).

  KEYS[1] jobs   KEYS[2] ring   KEYS[3] credit   KEYS[4] queued   KEYS[5] running
  KEYS[6] admitted   KEYS[7] delayed   KEYS[8] workers   KEYS[9] agents   KEYS[10] held
  (includes/admitRuns.lua says what each holds)

  ARGV[1] prefix of the tenants' pending lists   ARGV[2] policy (JSON)

  Returns {jobs waiting, jobs admitted}.
]]
--@include admitRuns
local prefix, policy = ARGV[1], read_policy()
local slots = {}
local function hold(agent)
  if agent_cap(policy, agent) > 0 then slots[agent] = (slots[agent] or 0) + 1 end
end
-- Counts the jobs of `source` by tenant into `target`, calling `each` with every job.
local function recount(source, target, each)
  local counts = {}
  local total = 0
  for _, data in ipairs(redis.call('HVALS', source)) do
    local job = cjson.decode(data)
    counts[job.tenant] = (counts[job.tenant] or 0) + 1
    total = total + 1
    each(job)
  end
  redis.call('DEL', target)
  for tenant, count in pairs(counts) do redis.call('HSET', target, tenant, count) end
  return counts, total
end
-- Every agent and tenant of a job waiting: where a job may be parked.
local parked_by = {}
local queued, waiting = recount(KEYS[1], KEYS[4], function(job)
  parked_by[job.agent_id] = parked_by[job.agent_id] or {}
  parked_by[job.agent_id][job.tenant] = true
end)
local _, running = recount(KEYS[6], KEYS[5], function(job) hold(job.agent_id) end)
for _, id in ipairs(redis.call('SMEMBERS', KEYS[10])) do
  local data = redis.call('HGET', KEYS[1], id)
  local agent = data and cjson.decode(data).agent_id
  if agent and agent_cap(policy, agent) > 0 then hold(agent) else redis.call('SREM', KEYS[10], id) end
end
redis.call('DEL', KEYS[9])
for agent, count in pairs(slots) do redis.call('HSET', KEYS[9], agent, count) end
for agent, tenants in pairs(parked_by) do
  local ring = agent_ring(agent)
  for _, tenant in ipairs(redis.call('LRANGE', ring, '0', '-1')) do
    if redis.call('LLEN', parked_list(agent, tenant)) == 0 then redis.call('LREM', ring, '0', tenant) end
  end
  for tenant in pairs(tenants) do
    if redis.call('LLEN', parked_list(agent, tenant)) > 0 and not redis.call('LPOS', ring, tenant) then redis.call('RPUSH', ring, tenant) end
  end
  fill_agent(prefix, policy, agent)
end
for _, tenant in ipairs(redis.call('LRANGE', KEYS[2], '0', '-1')) do
  if redis.call('LLEN', prefix .. tenant) == 0 then leave_ring(tenant) end
end
for tenant in pairs(queued) do
  if redis.call('LLEN', prefix .. tenant) > 0 and redis.call('HSETNX', KEYS[3], tenant, (share_of(policy, tenant))) == 1 then
    redis.call('RPUSH', KEYS[2], tenant)
  end
end
return {waiting, running}
