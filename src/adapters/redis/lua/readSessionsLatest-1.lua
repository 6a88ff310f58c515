--[[
  The latest run and latest checkpoint of each of a tenant's sessions named, in one round trip
  (a list of LangGraph threads shows both of each): per session, the run's fields toRun reads
  (never its input) and the latest checkpoint as readCheckpoint-3 answers it.

  KEYS[1] sessions sorted set of the tenant (the slot every key below shares)

  ARGV[1] prefix of the tenant's keys (`<prefix>:{tenant}:`)
  ARGV[2] budget: the state bytes (the sessions' state_bytes) one call reads at most; the first
          state is read whatever its size
  ARGV[3..] session ids

  Returns one entry per session id, in order: {run fields, checkpoint}, where run fields are
  RUN_FIELDS' values (all false without a run) and checkpoint is {0} (none), {1, entry JSON,
  the state hash as HGETALL answers it}, {2, seq} (a large state: the caller scans it) or {3}
  (past the budget: not read, the caller reads it on its own). The
  state's JSON is put together by the caller, not here: Redis runs one script at a time for
  every client, an API process is one of many.
]]
--@include constants
local RUN_FIELDS = {'id', 'session_id', 'agent_id', 'status', 'created_at', 'updated_at', 'error', 'approval_id', 'deadline_at', 'seq_num'}
local prefix = ARGV[1]
local budget = tonumber(ARGV[2])
local used = 0
local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local meta = redis.call('HMGET', prefix .. 'session:' .. id, 'seq', 'state_keys', 'run_id', 'state_bytes')
  local run = {}
  if meta[3] then run = redis.call('HMGET', prefix .. 'run:' .. meta[3], unpack(RUN_FIELDS)) end
  local seq = tonumber(meta[1] or '0')
  local checkpoint
  if seq == 0 then
    checkpoint = {0}
  elseif tonumber(meta[2] or '0') > SMALL_STATE_KEYS then
    checkpoint = {2, seq}
  elseif used > 0 and used + tonumber(meta[4] or '0') > budget then
    checkpoint = {3}
  else
    used = used + math.max(tonumber(meta[4] or '0'), 1)
    checkpoint = {1, redis.call('LINDEX', prefix .. 'checkpoints:' .. id, -1), redis.call('HGETALL', prefix .. 'state:' .. id)}
  end
  out[#out + 1] = {run, checkpoint}
end
return out
