--[[
  The latest run and latest checkpoint of each of a tenant's sessions named, in one round trip
  (a list of LangGraph threads shows both of each): per session, the run's fields toRun reads
  (never its input) and the latest checkpoint as readCheckpoint-3 answers it.

  KEYS[1] sessions sorted set of the tenant (the slot every key below shares)

  ARGV[1] prefix of the tenant's keys (`<prefix>:{tenant}:`)
  ARGV[2..] session ids

  Returns one entry per session id, in order: {run fields, checkpoint}, where run fields are
  RUN_FIELDS' values (all false without a run) and checkpoint is {0} (none), {1, entry JSON,
  state JSON}, or {2, seq} (a large state: the caller scans it).
]]
--@include constants
--@include stateJson
local RUN_FIELDS = {'id', 'session_id', 'agent_id', 'status', 'created_at', 'updated_at', 'error', 'approval_id', 'deadline_at', 'seq_num'}
local prefix = ARGV[1]
local out = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  local meta = redis.call('HMGET', prefix .. 'session:' .. id, 'seq', 'state_keys', 'run_id')
  local run = {}
  if meta[3] then run = redis.call('HMGET', prefix .. 'run:' .. meta[3], unpack(RUN_FIELDS)) end
  local seq = tonumber(meta[1] or '0')
  local checkpoint
  if seq == 0 then
    checkpoint = {0}
  elseif tonumber(meta[2] or '0') > SMALL_STATE_KEYS then
    checkpoint = {2, seq}
  else
    checkpoint = {1, redis.call('LINDEX', prefix .. 'checkpoints:' .. id, -1), state_json(prefix .. 'state:' .. id)}
  end
  out[#out + 1] = {run, checkpoint}
end
return out
