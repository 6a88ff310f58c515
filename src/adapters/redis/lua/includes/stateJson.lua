--[[
  The latest state of a session as one JSON object string, built from the raw JSON values of
  its state hash (never re-encoded by cjson): O(state), so only for states of at most
  SMALL_STATE_KEYS keys (larger ones are scanned in chunks by the caller). Needs constants.
]]
local function state_json(state_key)
  local flat = redis.call('HGETALL', state_key)
  local parts = {}
  for i = 1, #flat, 2 do
    parts[#parts + 1] = cjson.encode(flat[i]) .. ':' .. flat[i + 1]
  end
  return '{' .. table.concat(parts, ',') .. '}'
end
