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
--   KEYS[9] agents: hash agent id → slots its runs hold (jobs admitted, and jobs waiting in KEYS[10]),
--           of the agents with a cap only
--   KEYS[10] held: set of the ids of jobs waiting that hold a slot of their agent (handed one when
--           another run of it ended: they go at their tenant's next turn, no other job of the agent first)
-- Each tenant's pending jobs are a list at <pending prefix><tenant>, in the same hash slot. A job
-- whose agent is at its cap when its turn comes is parked, out of its tenant's turn, in the list
-- <KEYS[9]>:parked:<agent>|<tenant>; the tenants with jobs parked there take the agent's freed
-- slots in turn, the list <KEYS[9]>:ring:<agent> (the tenant whose turn it is first).
-- A policy is JSON {"d": [weight, max running], "t": {"<tenant>": [weight, max running]}, "a":
-- {"<agent id>": max running}}, "a" only when an agent has a cap: without it no job is decoded.
-- Every admission script takes ARGV[1] the prefix of the pending lists and ARGV[2] the policy;
-- those that admit take after them how a job admitted is handed to BullMQ's queue of runs in the
-- same script (see `hand`): ARGV[3] the prefix of its job keys (its keys are that prefix and
-- their names, BULL_ADD_KEYS), ARGV[4] every run job's options packed (msgpack, as BullMQ packs
-- them) with their last key "jobId" and not its value, ARGV[5] the key of the set of the job
-- ids handed. With ARGV[3] '' the scripts return the jobs they admit, for the caller to hand to
-- BullMQ (as a process of an earlier release did).
--@include bullAddStandardJob

-- The server's clock (ms): one clock for every process, whatever their skew.
local function server_now()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- The policy (ARGV[2]), decoded at its first use: the light paths need none of it.
local decoded_policy = nil
local function read_policy()
  decoded_policy = decoded_policy or cjson.decode(ARGV[2])
  return decoded_policy
end

-- Whether an agent has a cap, without decoding the policy: only such a policy has "a" (a tenant
-- named "a" only makes this say yes for nothing).
local function caps_agents()
  return string.find(ARGV[2], '"a":', 1, true) ~= nil
end

-- Hands a job just admitted to BullMQ, in this script (its add, as BullMQ's own script does it,
-- with the job's options and the run job as data), and marks it handed: one step, so a job is
-- never admitted and left out of BullMQ. `kind`: the job's, read from `data` when nil. Returns
-- false when the script has no handing (ARGV[3] ''; the caller hands it).
local function hand(now, id, data, kind)
  local queue = ARGV[3]
  if not queue or queue == '' then return false end
  local keys = {}
  for i, name in ipairs(BULL_ADD_KEYS) do keys[i] = queue .. name end
  kind = kind or cjson.decode(data).kind
  -- The options end with the key "jobId": the packed id is its value.
  bull_add_standard_job(keys, {cmsgpack.pack({queue, id, kind, now}), data, ARGV[4] .. cmsgpack.pack(id)})
  redis.call('SADD', ARGV[5], id)
  return true
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
  redis.call('LREM', KEYS[2], '1', tenant)
  redis.call('HDEL', KEYS[3], tenant)
end

-- The cap of an agent's runs, 0 for none.
local function agent_cap(policy, agent)
  return policy.a and policy.a[agent] or 0
end

local function agent_ring(agent) return KEYS[9] .. ':ring:' .. agent end
local function parked_list(agent, tenant) return KEYS[9] .. ':parked:' .. agent .. '|' .. tenant end

-- A job whose agent is at its cap waits for one of the agent's slots, out of its tenant's turn
-- (the tenant's other jobs go on). A resume goes first, as in its tenant's pending jobs.
local function park(id, job)
  local list = parked_list(job.agent_id, job.tenant)
  if redis.call('LLEN', list) == 0 then redis.call('RPUSH', agent_ring(job.agent_id), job.tenant) end
  if job.kind == 'resume' then redis.call('LPUSH', list, id) else redis.call('RPUSH', list, id) end
end

-- The agent's next parked job, tenants in turn, goes back to the head of its tenant's pending
-- jobs (the place it had) holding a slot of its agent when `hold` (the agent has a cap).
-- Returns false when no job is parked.
local function unpark(prefix, policy, agent, hold)
  local ring = agent_ring(agent)
  while true do
    local tenant = redis.call('LPOP', ring)
    if not tenant then return false end
    local list = parked_list(agent, tenant)
    local id = redis.call('LPOP', list)
    if redis.call('LLEN', list) > 0 then redis.call('RPUSH', ring, tenant) end
    if id and redis.call('HEXISTS', KEYS[1], id) == 1 then
      if hold then
        redis.call('SADD', KEYS[10], id)
        redis.call('HINCRBY', KEYS[9], agent, '1')
      end
      redis.call('LPUSH', prefix .. tenant, id)
      if redis.call('HSETNX', KEYS[3], tenant, (share_of(policy, tenant))) == 1 then redis.call('RPUSH', KEYS[2], tenant) end
      return true
    end
  end
end

-- Hands the agent's free slots to its parked jobs (every one of them when it has no cap now).
local function fill_agent(prefix, policy, agent)
  local cap = agent_cap(policy, agent)
  local held = tonumber(redis.call('HGET', KEYS[9], agent) or '0')
  while cap <= 0 or held < cap do
    if not unpark(prefix, policy, agent, cap > 0) then return end
    held = held + 1
  end
end

-- A slot of the agent is given back (its job ended, or was withdrawn holding it): the next
-- parked job takes it.
local function free_agent_slot(prefix, policy, agent)
  add_count(KEYS[9], agent, '-1')
  fill_agent(prefix, policy, agent)
end

-- Whether the job, its turn come, may take a slot of its agent: true (taken, or the agent has
-- no cap), or false when the agent is at its cap (the caller parks it). Reads the job only when
-- some agent has a cap.
local function take_agent_slot(policy, id, data)
  if not policy.a then return true end
  local job = cjson.decode(data)
  local cap = agent_cap(policy, job.agent_id)
  if cap <= 0 or redis.call('SREM', KEYS[10], id) == 1 then return true end
  if tonumber(redis.call('HGET', KEYS[9], job.agent_id) or '0') >= cap then
    park(id, job)
    return false
  end
  redis.call('HINCRBY', KEYS[9], job.agent_id, '1')
  return true
end

local function slots_of(members)
  local total = 0
  for _, member in ipairs(members) do
    total = total + tonumber(string.match(member, '(%d+)$'))
  end
  return total
end

-- Slots of the workers whose heartbeat has not lapsed (the lapsed ones are removed).
local function capacity(now)
  redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', now)
  return slots_of(redis.call('ZRANGE', KEYS[8], '0', '-1'))
end

-- The same count in one read, the lapsed left for `capacity` (every heartbeat's admission) to remove.
local function live_capacity(now)
  return slots_of(redis.call('ZRANGEBYSCORE', KEYS[8], '(' .. now, '+inf'))
end

-- Moves the delayed jobs that are due to their tenants' pending lists, then admits jobs while
-- slots are free: the tenant first in the ring gives its head job unless it is at its running
-- cap (then it waits for its next turn); after `weight` jobs, or none left, the turn passes. A
-- head job whose agent is at its cap is parked and the tenant's next job is looked at instead.
-- Each job admitted is handed to BullMQ here (see `hand`), or, without a handing in ARGV,
-- returned (its JSON) for the caller to hand to the workers.
local function admit(prefix, now, policy)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', now, 'LIMIT', '0', '1000')) do
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
    local tenant = redis.call('LINDEX', KEYS[2], '0')
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
    local data = id and redis.call('HGET', KEYS[1], id)
    if data and not take_agent_slot(policy, id, data) then
      -- Parked: the tenant's next job goes in this turn; a tenant with none left leaves the ring.
      if redis.call('LLEN', list) == 0 then leave_ring(tenant) end
    elseif id then
      redis.call('HDEL', KEYS[1], id)
      if data then
        add_count(KEYS[4], tenant, '-1')
        redis.call('HSET', KEYS[6], id, data)
        redis.call('HINCRBY', KEYS[5], tenant, '1')
        if not hand(now, id, data) then admitted[#admitted + 1] = data end
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
-- job is due, a slot is free and its tenant and its agent are under their caps. Then `admit` would take
-- it first and leave every key as this does (the ring, the credit and the queued count back
-- where they were), in a third of the commands. `max_running`: its tenant's cap, `cap` its
-- agent's (as the policy has them; 0 for none), so this decodes neither the policy nor the job.
-- Returns whether it was admitted, and whether no tenant waits and no job is delayed at all (then
-- no job waits but parked ones: see `park`).
local function admit_alone(now, id, job, data, max_running, cap)
  -- One look for both (the light load: neither exists) spares the two reads below.
  local idle = redis.call('EXISTS', KEYS[2], KEYS[7]) == 0
  if not idle then
    if redis.call('LLEN', KEYS[2]) > 0 then return false, false end
    if #redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', now, 'LIMIT', '0', '1') > 0 then return false, false end
  end
  if live_capacity(now) - redis.call('HLEN', KEYS[6]) <= 0 then return false, idle end
  if max_running > 0 and tonumber(redis.call('HGET', KEYS[5], job.tenant) or '0') >= max_running then return false, idle end
  if cap > 0 then
    if tonumber(redis.call('HGET', KEYS[9], job.agent_id) or '0') >= cap then return false, idle end
    redis.call('HINCRBY', KEYS[9], job.agent_id, '1')
  end
  redis.call('HSET', KEYS[6], id, data)
  redis.call('HINCRBY', KEYS[5], job.tenant, '1')
  return true, idle
end
