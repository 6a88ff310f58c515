--[[
  Shared by appendCheckpoint-3 and createRun-7: appends a checkpoint in O(patch). The patch's
  keys are written into the latest-state hash; the history entry records only how to undo them
  (each key's previous raw value, or that it was absent), never a copy of the whole state, so
  a growing state costs linear memory and a one-key patch one key's work.

  The session hash keeps the latest checkpoint's node (`node_id`) and time (`checkpoint_at`: a
  list of threads shows them without reading the history entry), the state's size (`state_bytes`: JSON bytes of its key/value pairs)
  and key count (`state_keys`). A patch that would take either past its limit changes nothing
  and answers STATE_TOO_LARGE or STATE_TOO_MANY_KEYS. History keeps the newest `retain` entries
  (the latest is never dropped). State values stay raw JSON strings, never re-encoded by cjson
  (which would turn [] into {} and round large numbers). Needs the constants include.

  The caller passes the session's seq, state_bytes and state_keys (read with its other fields
  in one HMGET).

  Returns the new entry's JSON, the new seq_num, state_bytes and state_keys ({checkpoint_id, node_id, seq_num, created_at, unset, restore}),
  or a failure code (a number).
]]
local function append_checkpoint(session_key, state_key, list_key, checkpoint_id, node, created_at,
                                  argv, first, max_bytes, max_keys, retain, seq, bytes, count)
  seq = tonumber(seq or '0') + 1
  bytes = tonumber(bytes or '0')
  count = tonumber(count or '0')
  -- The patch's keys are read and written in batches of PATCH_BATCH: one HMGET and one HSET
  -- each, within what unpack takes.
  local olds = {}
  for from = first, #argv, 2 * PATCH_BATCH do
    local names = {}
    for i = from, math.min(#argv, from + 2 * PATCH_BATCH - 1), 2 do names[#names + 1] = argv[i] end
    local values = redis.call('HMGET', state_key, unpack(names))
    for j = 1, #names do olds[#olds + 1] = values[j] or false end
  end
  for i = first, #argv, 2 do
    local old = olds[(i - first) / 2 + 1]
    if old then
      bytes = bytes - #old
    else
      bytes = bytes + #cjson.encode(argv[i]) + 2
      count = count + 1
    end
    bytes = bytes + #argv[i + 1]
  end
  if bytes > max_bytes then return STATE_TOO_LARGE end
  if count > max_keys then return STATE_TOO_MANY_KEYS end
  local unset, restore = {}, {}
  for i = first, #argv, 2 do
    local old = olds[(i - first) / 2 + 1]
    if old then
      restore[#restore + 1] = cjson.encode(argv[i]) .. ':' .. old
    else
      unset[#unset + 1] = cjson.encode(argv[i])
    end
  end
  for from = first, #argv, 2 * PATCH_BATCH do
    redis.call('HSET', state_key, unpack(argv, from, math.min(#argv, from + 2 * PATCH_BATCH - 1)))
  end
  local entry = '{"checkpoint_id":' .. cjson.encode(checkpoint_id) ..
    ',"node_id":' .. cjson.encode(node) ..
    ',"seq_num":' .. seq ..
    ',"created_at":' .. cjson.encode(created_at) ..
    ',"unset":[' .. table.concat(unset, ',') .. ']' ..
    ',"restore":{' .. table.concat(restore, ',') .. '}}'
  if redis.call('RPUSH', list_key, entry) > retain then redis.call('LTRIM', list_key, -retain, -1) end
  redis.call('HSET', session_key, 'seq', seq, 'node_id', node, 'updated_at', created_at,
    'checkpoint_at', created_at, 'state_bytes', bytes, 'state_keys', count)
  return entry, seq, bytes, count
end
