--[[
  Shared by appendCheckpoint-3 and createRun-7: appends a checkpoint whose state is the latest
  state (or an empty one when replace is true) shallow-merged with the pairs argv[first..].
  State values stay raw JSON strings, never re-encoded by cjson (which would turn [] into {}
  and round large numbers). Returns the checkpoint JSON document.
]]
local function append_checkpoint(session_key, state_key, list_key, session_id, checkpoint_id, node,
                                  created_at, replace, argv, first)
  if replace then redis.call('DEL', state_key) end
  for i = first, #argv, 2 do
    redis.call('HSET', state_key, argv[i], argv[i + 1])
  end
  local parts = {}
  local flat = redis.call('HGETALL', state_key)
  for i = 1, #flat, 2 do
    parts[#parts + 1] = cjson.encode(flat[i]) .. ':' .. flat[i + 1]
  end
  local seq = tonumber(redis.call('HGET', session_key, 'seq') or '0') + 1
  local doc = '{"session_id":' .. cjson.encode(session_id) ..
    ',"checkpoint_id":' .. cjson.encode(checkpoint_id) ..
    ',"node_id":' .. cjson.encode(node) ..
    ',"seq_num":' .. seq ..
    ',"created_at":' .. cjson.encode(created_at) ..
    ',"state":{' .. table.concat(parts, ',') .. '}}'
  redis.call('RPUSH', list_key, doc)
  redis.call('HSET', session_key, 'seq', seq, 'node_id', node, 'updated_at', created_at)
  return doc
end
