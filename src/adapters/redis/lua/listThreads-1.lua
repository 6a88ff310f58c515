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

  Returns one string: a row per session still stored, in order, rows apart by \1, a row's
  fields apart by \0 (neither is ever in an id, a time, or JSON text):
    id, agent_id, created_at, updated_at, metadata JSON, run status, run error as a JSON
    string, run seq_num, checkpoint kind, checkpoint seq_num, node_id, created_at, state JSON
  where the run's fields are empty without a run (error and seq_num also when unset), and kind
  is 0 (no checkpoint), 1 (the checkpoint's fields and state given), 2 (a large state: not
  read) or 3 (past the budget: not read); the checkpoint's fields are empty unless kind is 1.
  The latest checkpoint's node and time are the session hash's (`node_id`, `checkpoint_at`);
  a session written before `checkpoint_at` existed has its history entry read instead. One string, not nested
  arrays: the caller splits it at once instead of decoding hundreds of replies.
]]
--@include constants
--@include stateJson
local prefix = ARGV[1]
local budget = tonumber(ARGV[4])
local used = 0
local out = {}
for _, id in ipairs(redis.call('ZREVRANGE', KEYS[1], ARGV[2], ARGV[3])) do
  local key = prefix .. 'session:' .. id
  -- The session's hash read once: its fields, and its metadata's (as metadata_json puts them together).
  local flat = redis.call('HGETALL', key)
  local fields, parts = {}, {}
  for i = 1, #flat, 2 do
    local name = flat[i]
    if string.sub(name, 1, #METADATA_FIELD) == METADATA_FIELD then
      parts[#parts + 1] = string.sub(name, #METADATA_FIELD + 1) .. ':' .. flat[i + 1]
    else
      fields[name] = flat[i + 1]
    end
  end
  if fields.agent_id then
    local metadata = '{' .. table.concat(parts, ',') .. '}'
    local status, run_error, run_seq = '', '', ''
    if fields.run_id then
      local r = redis.call('HMGET', prefix .. 'run:' .. fields.run_id, 'status', 'error', 'seq_num')
      if r[1] then
        status = r[1]
        if r[2] and r[2] ~= '' then run_error = cjson.encode(r[2]) end
        run_seq = r[3] or ''
      end
    end
    local seq = tonumber(fields.seq or '0')
    local kind, node, at, state = 0, '', '', ''
    if seq > 0 then
      if tonumber(fields.state_keys or '0') > SMALL_STATE_KEYS then
        kind = 2
      elseif used > 0 and used + tonumber(fields.state_bytes or '0') > budget then
        kind = 3
      else
        used = used + math.max(tonumber(fields.state_bytes or '0'), 1)
        kind = 1
        node, at = fields.node_id, fields.checkpoint_at
        if not (node and at) then
          local entry = cjson.decode(redis.call('LINDEX', prefix .. 'checkpoints:' .. id, -1))
          node, at = entry.node_id, entry.created_at
        end
        state = state_json(prefix .. 'state:' .. id)
      end
    end
    out[#out + 1] = table.concat({id, fields.agent_id, fields.created_at or '', fields.updated_at or fields.created_at or '', metadata, status, run_error, run_seq, kind, kind == 1 and seq or '', node, at, state}, '\0')
  end
end
return table.concat(out, '\1')
