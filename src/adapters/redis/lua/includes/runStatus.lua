--[[
  The one rule of a run's status: the run hash holds it, and its session hash mirrors the
  status of the session's current run (field run_id) in run_status, so createRun and
  appendCheckpoint read a session's run state with one HGET. The tenant's active-runs sorted
  set (score = last status change, ms) holds exactly the runs queued, running or interrupted:
  what the reaper inspects, and what GET /api/runs reads for those statuses. Every status
  write goes through these functions. Needs the constants include.

  The tenant's run indexes (what GET /api/runs reads) hold runs by created_at (ms, the run
  hash's created_ms) under the prefix `stem` (keys.ts runIndexPrefix): `all` and
  `agent:<agent>` from creation, `status:<status>` and `agent-status:<status>:<agent>` for the
  terminal statuses only, from the run's end. An active run moves between statuses without
  touching an index, so a run costs four index writes in its life.
]]

-- What set_run_status reads of a run hash (a caller that checks the status first passes it).
local function run_meta(run_key)
  return redis.call('HMGET', run_key, 'status', 'agent_id', 'created_ms', 'error')
end

-- True for a run status during which the session may not start another run.
local function is_active(status)
  return ACTIVE_RUN_STATUS[status or ''] == true
end

-- Adds a new run to the tenant's run indexes.
local function index_run(stem, run_id, agent, created_ms)
  redis.call('ZADD', stem .. 'all', created_ms, run_id)
  redis.call('ZADD', stem .. 'agent:' .. agent, created_ms, run_id)
end

-- Takes a run that is deleted out of the tenant's run indexes.
local function unindex_run(stem, run_id, agent, status)
  redis.call('ZREM', stem .. 'all', run_id)
  redis.call('ZREM', stem .. 'agent:' .. agent, run_id)
  if status ~= '' and not is_active(status) then
    redis.call('ZREM', stem .. 'status:' .. status, run_id)
    redis.call('ZREM', stem .. 'agent-status:' .. status .. ':' .. agent, run_id)
  end
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
-- pairs, and mirrors it on the session when the run is the session's current one. A run's
-- error goes unless `extra` sets one. A run that stops (pauses or ends) records the seq_num of
-- the checkpoint it stopped at. `stem` is the prefix of the tenant's run indexes.
-- `before` is run_meta(run_key) and `session` the session's {run_id, seq}, when the caller
-- read them already (nil: read here).
local function set_run_status(run_key, session_key, active_key, stem, run_id, status, now, now_ms, extra, before, session)
  before = before or run_meta(run_key)
  local stops = status ~= 'queued' and status ~= 'running'
  if not session then
    if stops then
      session = redis.call('HMGET', session_key, 'run_id', 'seq')
    else
      session = { redis.call('HGET', session_key, 'run_id') }
    end
  end
  local current = session[1] == run_id
  -- A run written before created_ms existed stays out of the status indexes.
  if before[1] ~= status and before[3] and not is_active(status) then
    redis.call('ZADD', stem .. 'status:' .. status, before[3], run_id)
    redis.call('ZADD', stem .. 'agent-status:' .. status .. ':' .. before[2], before[3], run_id)
  end
  local fields = { 'status', status, 'updated_at', now }
  local has_error = false
  for i, value in ipairs(extra or {}) do
    fields[#fields + 1] = value
    if i % 2 == 1 and value == 'error' then has_error = true end
  end
  if stops and current then
    fields[#fields + 1] = 'seq_num'
    fields[#fields + 1] = session[2] or '0'
  end
  if before[4] and not has_error then redis.call('HDEL', run_key, 'error') end
  redis.call('HSET', run_key, unpack(fields))
  if current then
    redis.call('HSET', session_key, 'run_status', status, 'updated_at', now)
  end
  track_active(active_key, run_id, status, now_ms)
end
