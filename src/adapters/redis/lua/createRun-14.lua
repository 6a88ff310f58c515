--[[
  Creates a queued run, creating its session when absent (with its metadata) and binding a
  session created before any run (agent_id '') to the run's agent, unless the session already
  has an active (queued, running, interrupted) run or belongs to another agent. With an initial node,
  it also appends the run's first checkpoint (the input merged into the latest state), so a
  run never exists without the checkpoint it starts from. With ARGV[15] = '1', a busy session
  takes the run into its queue of runs waiting behind the current one instead (the node and
  input are kept on the run until promoteRun makes it current).
  Whether a start is refused, queued behind or made current is the rule of decideRunStart
  (adapters/shared/run-start.ts), which the memory Store runs: change both together.

  With an Idempotency-Key (ARGV[19] not ''), a start whose key is stored writes nothing: it
  answers the run that key created, or IDEMPOTENCY_MISMATCH when its fields differ; otherwise
  the key is stored with the run (expiring after ARGV[20] ms), so a run and its key exist
  together or not at all.

  KEYS[1] session hash
  KEYS[2] sessions sorted set (score = created_at ms)
  KEYS[3] sessions-of-agent sorted set
  KEYS[4] run hash
  KEYS[5] runs-of-session sorted set
  KEYS[6] state hash
  KEYS[7] checkpoints list
  KEYS[8] sessions-by-activity sorted set (score = last write, ms)
  KEYS[9] approvals-of-session set   KEYS[10] schedule run links hash of the tenant
  KEYS[11] active-runs sorted set of the tenant   KEYS[12] runs queued behind on the session (list)
  KEYS[13] decided approvals sorted set of the tenant
  KEYS[14] idempotency record hash (fingerprint, run_id) of the start's key (unused without one)

  ARGV, named and ordered by SCRIPT_ARGS.createRun (script-args.ts):
  ARGV[1] session id   ARGV[2] agent id   ARGV[3] run id
  ARGV[4] now (RFC 3339)   ARGV[5] now (ms)
  ARGV[6] initial node id, '' for no checkpoint   ARGV[7] checkpoint id
  ARGV[8] max state bytes   ARGV[9] max state keys   ARGV[10] checkpoints retained
  ARGV[11] runs retained per session   ARGV[12] prefix of run keys   ARGV[13] prefix of approval keys
  ARGV[14] deadline_at (RFC 3339), '' for none   ARGV[15] '1' to queue behind an active run
  ARGV[16] most runs queued behind   ARGV[17] prefix of the tenant's run indexes
  ARGV[18] '1' when a wait follows the run (its end is announced with its state: stepRun)
  ARGV[19] fingerprint of the start's fields, '' without an Idempotency-Key
  ARGV[20] how long the key is kept (ms)
  ARGV[21] the input of a run another engine executes (a LangGraph graph's, JSON), kept on the
    run hash as `graph_input`; '' for none
  ARGV[22] n, how many ARGV the new session's metadata takes (0 for none; ignored when the
    session exists)   ARGV[23..22+n] pairs: metadata key as JSON, the value's raw JSON
    (includes/sessionMetadata.lua)
  ARGV[23+n..] pairs: state key, raw JSON value

  A session keeps its newest ARGV[11] runs: older ones (never the current one) go with their
  approvals and schedule links, so a session reused for months stays bounded.

  Returns {1, created (0|1), queued behind (0|1), the run hash as a flat array, replayed (0|1)} or (codes of scripts.ts)
    {IDEMPOTENCY_MISMATCH} the key was used for a start with other fields
    {IDEMPOTENT_RUN_GONE} the key's run was removed (its session deleted, or dropped by retention)
    {SESSION_BUSY} the session has an active run (and ARGV[15] is not set, or its queue is full)
    {OTHER_AGENT, agent id} the session belongs to another agent
    {STATE_TOO_LARGE} / {STATE_TOO_MANY_KEYS} the input would take the state past a limit;
      nothing is written then
    {METADATA_TOO_LARGE, JSON bytes} a new session's metadata passes MAX_SESSION_METADATA_BYTES;
      nothing is written then
]]
--@include constants
--@include runStatus
--@include dropRuns
--@include appendCheckpoint
--@include sessionMetadata
if ARGV[19] ~= '' then
  local record = redis.call('HMGET', KEYS[14], 'fingerprint', 'run_id')
  if record[1] then
    if record[1] ~= ARGV[19] then return {IDEMPOTENCY_MISMATCH} end
    local run_key = ARGV[12] .. record[2]
    local run = redis.call('HGETALL', run_key)
    if #run == 0 then return {IDEMPOTENT_RUN_GONE} end
    local run_meta = redis.call('HMGET', run_key, 'session_id', 'status')
    -- KEYS[1] is the session key of ARGV[1]: the replayed run's session (maybe a minted id) shares its prefix.
    local session_key = string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[1]) .. run_meta[1]
    local behind = 0
    if run_meta[2] == 'queued' and redis.call('HGET', session_key, 'run_id') ~= record[2] then behind = 1 end
    return {1, 0, behind, run, 1}
  end
end
-- The key is stored with the run it names, in this same step.
local function remember_key()
  if ARGV[19] == '' then return end
  redis.call('HSET', KEYS[14], 'fingerprint', ARGV[19], 'run_id', ARGV[3])
  redis.call('PEXPIRE', KEYS[14], ARGV[20])
end
local meta = redis.call('HMGET', KEYS[1], 'agent_id', 'run_status', 'seq', 'state_bytes', 'state_keys')
local agent = meta[1]
local created = 0
local metadata_last = 22 + tonumber(ARGV[22])
local state_first = metadata_last + 1
-- The run's hash and its entry in the session's runs (the caller makes it current, or queues it).
local function new_run()
  local fields = { 'id', ARGV[3], 'session_id', ARGV[1], 'agent_id', ARGV[2],
    'status', 'queued', 'created_at', ARGV[4], 'updated_at', ARGV[4], 'created_ms', ARGV[5] }
  if ARGV[14] ~= '' then
    fields[#fields + 1] = 'deadline_at'
    fields[#fields + 1] = ARGV[14]
  end
  if ARGV[18] == '1' then
    fields[#fields + 1] = 'waited'
    fields[#fields + 1] = '1'
  end
  if ARGV[21] ~= '' then
    fields[#fields + 1] = 'graph_input'
    fields[#fields + 1] = ARGV[21]
  end
  redis.call('HSET', KEYS[4], unpack(fields))
  redis.call('ZADD', KEYS[5], ARGV[5], ARGV[3])
  index_run(ARGV[17], ARGV[3], ARGV[2], ARGV[5])
end
-- A session created before its first run (agent_id '') has no run: this one binds it below.
if agent and agent ~= '' then
  if agent ~= ARGV[2] then return {OTHER_AGENT, agent} end
  if is_active(meta[2]) then
    if ARGV[15] ~= '1' or redis.call('LLEN', KEYS[12]) >= tonumber(ARGV[16]) then return {SESSION_BUSY} end
    new_run()
    track_active(KEYS[11], ARGV[3], 'queued', ARGV[5])
    if ARGV[6] ~= '' then
      local pairs = {}
      for i = state_first, #ARGV do pairs[#pairs + 1] = ARGV[i] end
      redis.call('HSET', KEYS[4], 'start_node', ARGV[6], 'start_input', cjson.encode(pairs))
    end
    redis.call('RPUSH', KEYS[12], ARGV[3])
    remember_key()
    return {1, 0, 1, redis.call('HGETALL', KEYS[4]), 0}
  end
end
local metadata_bytes = 0
if not agent then
  local over
  metadata_bytes, over = metadata_after(KEYS[1], ARGV, 23, metadata_last, 0)
  if not metadata_bytes then return {METADATA_TOO_LARGE, over} end
end
if ARGV[6] ~= '' then
  -- The checkpoint first: it checks the limits before writing anything, so a refused input
  -- leaves neither a run nor a new session behind.
  local entry = append_checkpoint(KEYS[1], KEYS[6], KEYS[7], ARGV[7], ARGV[6], ARGV[4], ARGV, state_first,
    tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), meta[3], meta[4], meta[5])
  if type(entry) == 'number' then return {entry} end
end
if not agent then
  redis.call('HSET', KEYS[1], 'agent_id', ARGV[2], 'created_at', ARGV[4])
  write_metadata(KEYS[1], ARGV, 23, metadata_last, metadata_bytes, {KEYS[2], ARGV[1], ARGV[5]})
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
  created = 1
elseif agent == '' then
  -- Bound from now on; in its agent's index at its created_at, as in the tenant's.
  redis.call('HSET', KEYS[1], 'agent_id', ARGV[2])
  redis.call('ZADD', KEYS[3], redis.call('ZSCORE', KEYS[2], ARGV[1]) or ARGV[5], ARGV[1])
end
new_run()
make_current_run(KEYS[1], KEYS[11], ARGV[3], 'queued', ARGV[4], ARGV[5])
redis.call('ZADD', KEYS[8], ARGV[5], ARGV[1])
local excess = redis.call('ZCARD', KEYS[5]) - tonumber(ARGV[11])
if excess > 0 then
  local dropped = {}
  for _, run_id in ipairs(redis.call('ZRANGE', KEYS[5], 0, excess - 1)) do
    -- Never an active run (the new one, or one queued behind).
    if not redis.call('ZSCORE', KEYS[11], run_id) then dropped[#dropped + 1] = run_id end
  end
  drop_runs(dropped, KEYS[5], KEYS[9], KEYS[10], KEYS[13], ARGV[12], ARGV[13], ARGV[17])
end
remember_key()
return {1, created, 0, redis.call('HGETALL', KEYS[4]), 0}
