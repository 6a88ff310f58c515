--[[
  The one rule of a run's status: the run hash holds it, and its session hash mirrors the
  status of the session's current run (field run_id) in run_status, so createRun and
  appendCheckpoint read a session's run state with one HGET. Every status write goes through
  these two functions. Needs the constants include.
]]

-- Makes a new run the session's current one, with status `status`.
local function make_current_run(session_key, run_id, status, now)
  redis.call('HSET', session_key, 'run_id', run_id, 'run_status', status, 'updated_at', now)
end

-- Sets the status of run `run_id` (hash `run_key`) with updated_at and any extra field/value
-- pairs, and mirrors it on the session when the run is the session's current one.
local function set_run_status(run_key, session_key, run_id, status, now, extra)
  local fields = { 'status', status, 'updated_at', now }
  for _, value in ipairs(extra or {}) do fields[#fields + 1] = value end
  redis.call('HSET', run_key, unpack(fields))
  if redis.call('HGET', session_key, 'run_id') == run_id then
    redis.call('HSET', session_key, 'run_status', status, 'updated_at', now)
  end
end

-- True for a run status during which the session may not start another run.
local function is_active(status)
  return ACTIVE_RUN_STATUS[status or ''] == true
end
