--[[
  Recomputes what could drift (after a failover lost writes): each tenant's queued and running
  counts from the jobs waiting and admitted, and the ring from the tenants' pending lists.

  KEYS[1] jobs   KEYS[2] ring   KEYS[3] credit   KEYS[4] queued   KEYS[5] running
  KEYS[6] admitted   KEYS[7] delayed   KEYS[8] workers   (includes/admitRuns.lua says what each holds)

  ARGV[1] prefix of the tenants' pending lists   ARGV[2] policy (JSON)

  Returns {jobs waiting, jobs admitted}.
]]
--@include admitRuns
local prefix, policy = ARGV[1], cjson.decode(ARGV[2])
local function recount(source, target)
  local counts = {}
  local total = 0
  for _, data in ipairs(redis.call('HVALS', source)) do
    local tenant = cjson.decode(data).tenant
    counts[tenant] = (counts[tenant] or 0) + 1
    total = total + 1
  end
  redis.call('DEL', target)
  for tenant, count in pairs(counts) do redis.call('HSET', target, tenant, count) end
  return counts, total
end
local queued, waiting = recount(KEYS[1], KEYS[4])
local _, running = recount(KEYS[6], KEYS[5])
for _, tenant in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  if redis.call('LLEN', prefix .. tenant) == 0 then leave_ring(tenant) end
end
for tenant in pairs(queued) do
  if redis.call('LLEN', prefix .. tenant) > 0 and redis.call('HSETNX', KEYS[3], tenant, (share_of(policy, tenant))) == 1 then
    redis.call('RPUSH', KEYS[2], tenant)
  end
end
return {waiting, running}
