--[[
  The one rule of a run's status: the run hash holds it, and its session hash mirrors the
  status of the session's current run (field run_id) in run_status, so createRun and
  appendCheckpoint read a session's run state with one HGET. The tenant's active-runs sorted
  set (score = last status change, ms) holds exactly the runs queued, running or interrupted:
  what the reaper inspects. Every status write goes through these functions. Needs the
  constants include.

  The tenant's run indexes (what GET /api/runs reads) hold each run by created_at (ms) under the
  prefix `stem` (keys.ts runIndexPrefix): `all`, `agent:<agent>`, `status:<status>` and
  `agent-status:<status>:<agent>`. set_run_status moves a run between the status ones.
]]

-- Adds a new run to the tenant's run indexes.
local function index_run(stem, run_id, agent, status, created_ms)
  redis.call('ZADD', stem .. 'all', created_ms, run_id)
  redis.call('ZADD', stem .. 'agent:' .. agent, created_ms, run_id)
  redis.call('ZADD', stem .. 'status:' .. status, created_ms, run_id)
  redis.call('ZADD', stem .. 'agent-status:' .. status .. ':' .. agent, created_ms, run_id)
end

-- Takes a run that is deleted out of the tenant's run indexes.
local function unindex_run(stem, run_id, agent, status)
  redis.call('ZREM', stem .. 'all', run_id)
  redis.call('ZREM', stem .. 'agent:' .. agent, run_id)
  redis.call('ZREM', stem .. 'status:' .. status, run_id)
  redis.call('ZREM', stem .. 'agent-status:' .. status .. ':' .. agent, run_id)
end

-- True for a run status during which the session may not start another run.
local function is_active(status)
  return ACTIVE_RUN_STATUS[status or ''] == true
end

-- Keeps run `run_id` in the active-runs set exactly while its status is active.
local function track_active(active_key, run_id, status, now_ms)
  if is_active(status) then
    redis.call('ZADD', active_key, now_ms, run_id)
  else
    redis.call('ZREM', active_key, run_id)
  end
end

-- Makes a new run the session's current one, with status `status`.
local function make_current_run(session_key, active_key, run_id, status, now, now_ms)
  redis.call('HSET', session_key, 'run_id', run_id, 'run_status', status, 'updated_at', now)
  track_active(active_key, run_id, status, now_ms)
end

-- Sets the status of run `run_id` (hash `run_key`) with updated_at and any extra field/value
-- pairs, and mirrors it on the session when the run is the session's current one.
-- A run that stops (pauses or ends) records the seq_num of the checkpoint it stopped at.
-- `stem` is the prefix of the tenant's run indexes.
local function set_run_status(run_key, session_key, active_key, stem, run_id, status, now, now_ms, extra)
  local before = redis.call('HMGET', run_key, 'status', 'agent_id')
  local created_ms = redis.call('ZSCORE', stem .. 'all', run_id)
  -- A run written before the indexes existed has no score there: it stays out of them.
  if before[1] and before[1] ~= status and created_ms then
    redis.call('ZREM', stem .. 'status:' .. before[1], run_id)
    redis.call('ZREM', stem .. 'agent-status:' .. before[1] .. ':' .. before[2], run_id)
    redis.call('ZADD', stem .. 'status:' .. status, created_ms, run_id)
    redis.call('ZADD', stem .. 'agent-status:' .. status .. ':' .. before[2], created_ms, run_id)
  end
  local fields = { 'status', status, 'updated_at', now }
  for _, value in ipairs(extra or {}) do fields[#fields + 1] = value end
  if status ~= 'queued' and status ~= 'running' and redis.call('HGET', session_key, 'run_id') == run_id then
    fields[#fields + 1] = 'seq_num'
    fields[#fields + 1] = redis.call('HGET', session_key, 'seq') or '0'
  end
  redis.call('HSET', run_key, unpack(fields))
  if redis.call('HGET', session_key, 'run_id') == run_id then
    redis.call('HSET', session_key, 'run_status', status, 'updated_at', now)
  end
  track_active(active_key, run_id, status, now_ms)
end
