--[[
  Sets a run's status (and error), mirroring it on its session when it is the session's
  current run. With ARGV[4] set, applies only when the run's status is one of the listed ones.
  A terminal status (not active, not interrupted) also closes the run's pending approvals
  (status cancelled, decided_by ARGV[8]; a graph's parallel interrupts leave several) and takes the run out of its session's queue of runs
  waiting behind the current one.

  KEYS[1] run hash
  KEYS[2] session hash
  KEYS[3] sessions-by-activity sorted set of the tenant (a run's end is its session's activity)
  KEYS[4] active-runs sorted set of the tenant
  KEYS[5] pending approvals sorted set of the tenant
  KEYS[6] runs queued behind on the session (list)
  KEYS[7] decided approvals sorted set of the tenant (a closed approval is listed there)

  ARGV, named and ordered by SCRIPT_ARGS.updateRun (script-args.ts):
  ARGV[1] status   ARGV[2] error ('' clears it)   ARGV[3] now (RFC 3339)
  ARGV[4] comma-separated statuses the run must have now, '' for any   ARGV[5] run id
  ARGV[6] session id   ARGV[7] now (ms)   ARGV[8] who closes a pending approval
  ARGV[9] prefix of approval keys   ARGV[10] prefix of the tenant's run indexes
  ARGV[11] the session's approvals set (approval ids start with '<run id>.')

  Returns {approvals closed, run hash as a flat array, runs waiting behind it (0 unless it
  ended as its session's current run)}, or (codes of scripts.ts)
    {NOT_FOUND} no such run
    {RUN_STATUS, current status} the run's status is not one of ARGV[4]
]]
--@include constants
--@include runStatus
local before = run_meta(KEYS[1])
local current = before[1]
if not current then return {NOT_FOUND} end
if ARGV[4] ~= '' and not string.find(',' .. ARGV[4] .. ',', ',' .. current .. ',', 1, true) then
  return {RUN_STATUS, current}
end
local extra = nil
if ARGV[2] ~= '' then extra = { 'error', ARGV[2] } end
set_run_status(KEYS[1], KEYS[2], KEYS[4], ARGV[10], ARGV[5], ARGV[1], ARGV[3], ARGV[7], extra, before)
local closed = 0
local waiting = 0
if not is_active(ARGV[1]) then
  redis.call('ZADD', KEYS[3], ARGV[7], ARGV[6])
  if ARGV[1] ~= 'interrupted' then
    -- Only an interrupted run has a pending approval; only a run never made current waits in the queue.
    -- Every pending request of the run: a graph's parallel interrupts pause it on several.
    if current == 'interrupted' or current == 'queued' or current == 'running' then
      local approval_id = redis.call('HGET', KEYS[1], 'approval_id')
      local ids = {}
      if approval_id then ids[1] = approval_id end
      local prefix = ARGV[5] .. '.'
      for _, id in ipairs(redis.call('SMEMBERS', ARGV[11])) do
        if id ~= approval_id and string.sub(id, 1, #prefix) == prefix then ids[#ids + 1] = id end
      end
      for _, id in ipairs(ids) do
        if redis.call('HGET', ARGV[9] .. id, 'status') == 'pending' then
          redis.call('HSET', ARGV[9] .. id, 'status', 'cancelled', 'decided_by', ARGV[8], 'decided_at', ARGV[3])
          closed = closed + redis.call('ZREM', KEYS[5], id)
          redis.call('ZADD', KEYS[7], ARGV[7], id)
        end
      end
    end
    if redis.call('HGET', KEYS[2], 'run_id') == ARGV[5] then
      waiting = redis.call('LLEN', KEYS[6])
    elseif current == 'queued' then
      redis.call('LREM', KEYS[6], 0, ARGV[5])
      redis.call('HDEL', KEYS[1], 'start_node', 'start_input')
    end
  end
end
return {closed, redis.call('HGETALL', KEYS[1]), waiting}
