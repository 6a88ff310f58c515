-- The admission rule of the run queue (the memory adapter's run-queue.ts is the same rule).
-- Keys of every admission script, in this order:
--   KEYS[1] jobs: hash job id → job JSON, of the jobs waiting (pending or delayed)
--   KEYS[2] ring: list of the tenants with pending jobs, the one whose turn it is first
--   KEYS[3] credit: hash tenant → picks left in its turn (a field exactly for each tenant in the ring)
--   KEYS[4] queued: hash tenant → jobs waiting (pending and delayed)
--   KEYS[5] running: hash tenant → jobs admitted
--   KEYS[6] admitted: hash job id → job JSON, of the jobs admitted to a slot and not released
--   KEYS[7] delayed: sorted set of job ids by due time (ms)
--   KEYS[8] workers: sorted set of "<worker id> <slots>" by the time its heartbeat lapses (ms)
-- Each tenant's pending jobs are a list at <pending prefix><tenant>, in the same hash slot.
-- A policy is JSON {"d": [weight, max running], "t": {"<tenant>": [weight, max running]}}.

-- The server's clock (ms): one clock for every process, whatever their skew.
local function server_now()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local function share_of(policy, tenant)
  local share = policy.t[tenant] or policy.d
  return share[1], share[2]
end

local function add_count(key, tenant, by)
  if redis.call('HINCRBY', key, tenant, by) <= 0 then redis.call('HDEL', key, tenant) end
end

-- A resume goes to the head of its tenant's jobs (its run keeps its place), a start to the tail.
local function push_pending(prefix, policy, id, job)
  local list = prefix .. job.tenant
  if job.kind == 'resume' then redis.call('LPUSH', list, id) else redis.call('RPUSH', list, id) end
  local weight = share_of(policy, job.tenant)
  if redis.call('HSETNX', KEYS[3], job.tenant, weight) == 1 then redis.call('RPUSH', KEYS[2], job.tenant) end
end

local function leave_ring(tenant)
  redis.call('LREM', KEYS[2], 1, tenant)
  redis.call('HDEL', KEYS[3], tenant)
end

-- Slots of the workers whose heartbeat has not lapsed.
local function capacity(now)
  redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', now)
  local total = 0
  for _, member in ipairs(redis.call('ZRANGE', KEYS[8], 0, -1)) do
    total = total + tonumber(string.match(member, '(%d+)$'))
  end
  return total
end

-- Moves the delayed jobs that are due to their tenants' pending lists, then admits jobs while
-- slots are free: the tenant first in the ring gives its head job unless it is at its running
-- cap (then it waits for its next turn); after `weight` jobs, or none left, the turn passes.
-- Returns the JSON of each job admitted, for the caller to hand to the workers.
local function admit(prefix, now, policy)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', now, 'LIMIT', 0, 1000)) do
    redis.call('ZREM', KEYS[7], id)
    local data = redis.call('HGET', KEYS[1], id)
    if data then push_pending(prefix, policy, id, cjson.decode(data)) end
  end
  -- No tenant waiting (a release at light load): nothing to admit, no slots to count.
  if redis.call('LLEN', KEYS[2]) == 0 then return {} end
  local free = capacity(now) - redis.call('HLEN', KEYS[6])
  local admitted = {}
  local skipped = 0
  while free > 0 do
    local tenants = redis.call('LLEN', KEYS[2])
    if skipped >= tenants then break end
    local tenant = redis.call('LINDEX', KEYS[2], 0)
    local list = prefix .. tenant
    local weight, max_running = share_of(policy, tenant)
    local id = false
    if max_running > 0 and tonumber(redis.call('HGET', KEYS[5], tenant) or '0') >= max_running then
      redis.call('RPUSH', KEYS[2], redis.call('LPOP', KEYS[2]))
      skipped = skipped + 1
    else
      id = redis.call('LPOP', list)
      -- An empty list in the ring (it should not be): the tenant leaves it.
      if not id then leave_ring(tenant) end
    end
    if id then
      local data = redis.call('HGET', KEYS[1], id)
      redis.call('HDEL', KEYS[1], id)
      if data then
        add_count(KEYS[4], tenant, -1)
        redis.call('HSET', KEYS[6], id, data)
        redis.call('HINCRBY', KEYS[5], tenant, 1)
        admitted[#admitted + 1] = data
        free = free - 1
      end
      skipped = 0
      local left = tonumber(redis.call('HGET', KEYS[3], tenant) or weight) - 1
      if redis.call('LLEN', list) == 0 then
        leave_ring(tenant)
      elseif left > 0 then
        redis.call('HSET', KEYS[3], tenant, left)
      else
        redis.call('HSET', KEYS[3], tenant, weight)
        redis.call('RPUSH', KEYS[2], redis.call('LPOP', KEYS[2]))
      end
    end
  end
  return admitted
end

-- A job may skip the ring when it would be admitted at once, alone: no tenant waits, no delayed
-- job is due, a slot is free and its tenant is under its running cap. Then `admit` would take
-- it first and leave every key as this does (the ring, the credit and the queued count back
-- where they were), in a third of the commands.
local function admit_alone(now, policy, id, job, data)
  if redis.call('LLEN', KEYS[2]) > 0 then return false end
  if #redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', now, 'LIMIT', 0, 1) > 0 then return false end
  if capacity(now) - redis.call('HLEN', KEYS[6]) <= 0 then return false end
  local _, max_running = share_of(policy, job.tenant)
  if max_running > 0 and tonumber(redis.call('HGET', KEYS[5], job.tenant) or '0') >= max_running then return false end
  redis.call('HSET', KEYS[6], id, data)
  redis.call('HINCRBY', KEYS[5], job.tenant, 1)
  return true
end
