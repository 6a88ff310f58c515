--[[
  One page of a tenant's sessions, newest first, each with what a list of LangGraph threads
  shows of it, in one round trip: listSessions-1's page and readSessionsLatest-1's reads in one
  script, the session's hash read once. Metadata and state come as JSON object strings built
  from their raw stored values (never re-encoded): the caller sends them on as they are.

  KEYS[1] the tenant's sessions sorted set

  ARGV[1] prefix of the tenant's keys (`<prefix>:{tenant}:`)
  ARGV[2] start   ARGV[3] stop (ZREVRANGE indices)
  ARGV[4] budget: the state bytes (the sessions' state_bytes) one call reads at most; the first
          state is read whatever its size

  Returns one entry per session still stored, in order:
    {id, agent_id, created_at, updated_at, metadata JSON, run status, run error, run seq_num,
     checkpoint kind, checkpoint entry JSON, state JSON}
  where the run's fields are false without a run (error and seq_num also when unset), and kind
  is 0 (no checkpoint), 1 (entry and state given), 2 (a large state: not read) or 3 (past the
  budget: not read); entry and state are false unless kind is 1.
]]
--@include constants
--@include sessionMetadata
--@include stateJson
local prefix = ARGV[1]
local budget = tonumber(ARGV[4])
local used = 0
local out = {}
for _, id in ipairs(redis.call('ZREVRANGE', KEYS[1], ARGV[2], ARGV[3])) do
  local key = prefix .. 'session:' .. id
  local f = redis.call('HMGET', key, 'agent_id', 'created_at', 'updated_at', 'metadata_bytes', 'seq', 'state_keys', 'run_id', 'state_bytes')
  if f[1] then
    local metadata = '{}'
    if tonumber(f[4] or '0') > 0 then metadata = metadata_json(key) end
    local run = {false, false, false}
    if f[7] then
      local r = redis.call('HMGET', prefix .. 'run:' .. f[7], 'status', 'error', 'seq_num')
      if r[1] then run = r end
    end
    local seq = tonumber(f[5] or '0')
    local kind, entry, state = 0, false, false
    if seq > 0 then
      if tonumber(f[6] or '0') > SMALL_STATE_KEYS then
        kind = 2
      elseif used > 0 and used + tonumber(f[8] or '0') > budget then
        kind = 3
      else
        used = used + math.max(tonumber(f[8] or '0'), 1)
        kind = 1
        entry = redis.call('LINDEX', prefix .. 'checkpoints:' .. id, -1)
        state = state_json(prefix .. 'state:' .. id)
      end
    end
    out[#out + 1] = {id, f[1], f[2] or '', f[3] or f[2] or '', metadata, run[1], run[2], run[3], kind, entry, state}
  end
end
return out
