--[[
  Starts the next run queued behind on a session: when the session has no active run, takes
  the oldest waiting run, appends its first checkpoint (its kept input merged into the latest
  state, at its kept node) and makes it the current run, still queued, for the caller to
  enqueue. A waiting run whose input would take the state past a limit fails (its error says
  why) and the next one is tried.

  KEYS[1] session hash   KEYS[2] state hash   KEYS[3] checkpoints list
  KEYS[4] sessions-by-activity sorted set   KEYS[5] active-runs sorted set
  KEYS[6] runs queued behind on the session (list)

  ARGV, named and ordered by SCRIPT_ARGS.promoteRun (script-args.ts):
  ARGV[1] now (RFC 3339)   ARGV[2] now (ms)   ARGV[3] checkpoint id
  ARGV[4] max state bytes   ARGV[5] max state keys   ARGV[6] checkpoints retained
  ARGV[7] prefix of run keys   ARGV[8] session id   ARGV[9] prefix of the tenant's run indexes

  Returns {run id made current ('' when none), ids of the waiting runs failed on the way…}.
]]
--@include constants
--@include runStatus
--@include appendCheckpoint
local meta = redis.call('HMGET', KEYS[1], 'agent_id', 'run_status', 'seq', 'state_bytes', 'state_keys')
local reply = {''}
if not meta[1] or is_active(meta[2]) then return reply end
while true do
  local run_id = redis.call('LPOP', KEYS[6])
  if not run_id then return reply end
  local run_key = ARGV[7] .. run_id
  local run = redis.call('HMGET', run_key, 'status', 'start_node', 'start_input')
  if run[1] == 'queued' then
    local entry = ''
    if run[2] and run[2] ~= '' then
      entry = append_checkpoint(KEYS[1], KEYS[2], KEYS[3], ARGV[3], run[2], ARGV[1], cjson.decode(run[3]), 1,
        tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), meta[3], meta[4], meta[5])
    end
    redis.call('HDEL', run_key, 'start_node', 'start_input')
    if type(entry) == 'number' then
      local why = 'The run input would take the session state past its size limit.'
      if entry == STATE_TOO_MANY_KEYS then why = 'The run input would take the session state past its key limit.' end
      set_run_status(run_key, KEYS[1], KEYS[5], ARGV[9], run_id, 'failed', ARGV[1], ARGV[2], { 'error', why })
      reply[#reply + 1] = run_id
    else
      make_current_run(KEYS[1], KEYS[5], run_id, 'queued', ARGV[1], ARGV[2])
      redis.call('HSET', run_key, 'updated_at', ARGV[1])
      redis.call('ZADD', KEYS[4], ARGV[2], ARGV[8])
      reply[1] = run_id
      return reply
    end
  end
end
