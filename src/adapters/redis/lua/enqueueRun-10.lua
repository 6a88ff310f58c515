--[[
  Queues a run job for its turn, then admits jobs while worker slots are free. A job id already
  waiting or admitted is not queued again (a job is never admitted twice).

  KEYS[1] jobs   KEYS[2] ring   KEYS[3] credit   KEYS[4] queued   KEYS[5] running
  KEYS[6] admitted   KEYS[7] delayed   KEYS[8] workers   KEYS[9] agents   KEYS[10] held
  (includes/admitRuns.lua says what each holds)

  ARGV[1] prefix of the tenants' pending lists   ARGV[2] policy (JSON)
  ARGV[3..5] how a job admitted is handed to BullMQ (includes/admitRuns.lua)
  ARGV[6] job id   ARGV[7] job JSON
  ARGV[8] delay (ms): above 0, the job waits its turn only from then on
  ARGV[9] its tenant, ARGV[10] its kind and ARGV[11] its agent, as in its JSON
  ARGV[12] its tenant's max running and ARGV[13] its agent's, as in the policy (0 for no cap)

  Returns {1 when queued, 0 when it was there already, then the jobs of its tenant waiting (its
  queued count), then the JSON of each job admitted and not handed to BullMQ here…} (every job
  admitted is handed here when ARGV[3..5] say how: includes/admitRuns.lua).

  At light load (nothing waiting: the job is admitted alone) neither the policy nor the job is
  decoded.
]]
--@include admitRuns
local prefix, now = ARGV[1], server_now()
local id, data, delay = ARGV[6], ARGV[7], tonumber(ARGV[8])
local job = {tenant = ARGV[9], kind = ARGV[10], agent_id = ARGV[11]}
local function waiting() return tonumber(redis.call('HGET', KEYS[4], job.tenant) or '0') end
if redis.call('HEXISTS', KEYS[1], id) == 1 or redis.call('HEXISTS', KEYS[6], id) == 1 then return {0, waiting()} end
if delay <= 0 then
  local alone, idle = admit_alone(now, id, job, data, tonumber(ARGV[12]), tonumber(ARGV[13]))
  if alone then
    -- Nothing waiting anywhere and no agent cap (so nothing parked): its tenant has none waiting.
    local queued = (idle and not caps_agents()) and 0 or waiting()
    if hand(now, id, data, job.kind) then return {1, queued} end
    return {1, queued, data}
  end
end
redis.call('HSET', KEYS[1], id, data)
redis.call('HINCRBY', KEYS[4], job.tenant, '1')
if delay > 0 then
  redis.call('ZADD', KEYS[7], now + delay, id)
else
  push_pending(prefix, read_policy(), id, job)
end
local reply = admit(prefix, now, read_policy())
table.insert(reply, 1, waiting())
table.insert(reply, 1, 1)
return reply
