--[[
  A session's metadata (Session.metadata) in its hash: one field per key, METADATA_FIELD and
  the key as JSON, holding the value's raw JSON (never re-encoded by cjson, which would turn []
  into {} and round large numbers). The hash's `metadata_bytes` is the sum over the keys of
  #key JSON + #value + 2, so the metadata's JSON object takes that plus 1 bytes ({} when none).
  A write is a run of pairs in ARGV: a key as JSON, its value's raw JSON ('' removes the key).
  The metadata index (domain/metadata-pairs.ts): the sorted set `<sessions key>:meta:`
  + key JSON + NUL + value JSON lists, by created_at ms as the sessions sorted set, the sessions
  whose metadata holds that key with that scalar value (objects, arrays and pairs longer than
  MAX_INDEXED_PAIR_BYTES are not indexed); a session with more than MAX_INDEXED_PAIRS such pairs
  is in `<sessions key>:meta:overflow` alone (METADATA_OVERFLOW).
  Needs the constants include.
]]

-- The index set of a key (as JSON) holding a value (its raw JSON); nil when not indexed.
local function metadata_index_key(sessions_key, key_json, value_json)
  local first = string.sub(value_json, 1, 1)
  if first == '{' or first == '[' or #key_json + #value_json > MAX_INDEXED_PAIR_BYTES then return nil end
  return sessions_key .. ':meta:' .. key_json .. '\0' .. value_json
end

-- The index sets the session's stored metadata puts it in.
local function metadata_index_sets(session_key, sessions_key)
  local sets = {}
  local flat = redis.call('HGETALL', session_key)
  for i = 1, #flat, 2 do
    if string.sub(flat[i], 1, #METADATA_FIELD) == METADATA_FIELD then
      local set = metadata_index_key(sessions_key, string.sub(flat[i], #METADATA_FIELD + 1), flat[i + 1])
      if set then sets[#sets + 1] = set end
    end
  end
  if #sets > MAX_INDEXED_PAIRS then return { sessions_key .. ':meta:overflow' } end
  return sets
end

-- Takes the session out of the index sets of its stored metadata (before it is deleted).
local function unindex_metadata(session_key, sessions_key, session_id)
  for _, set in ipairs(metadata_index_sets(session_key, sessions_key)) do redis.call('ZREM', set, session_id) end
end

-- The metadata_bytes once the pairs argv[first..last] apply over `bytes`; writes nothing.
-- Answers nil and the JSON size when that would pass MAX_SESSION_METADATA_BYTES.
local function metadata_after(session_key, argv, first, last, bytes)
  bytes = tonumber(bytes or '0')
  for i = first, last, 2 do
    local old = redis.call('HGET', session_key, METADATA_FIELD .. argv[i])
    if old then bytes = bytes - (#argv[i] + #old + 2) end
    if argv[i + 1] ~= '' then bytes = bytes + #argv[i] + #argv[i + 1] + 2 end
  end
  if bytes + 1 > MAX_SESSION_METADATA_BYTES then return nil, bytes + 1 end
  return bytes
end

-- Applies the pairs argv[first..last], `bytes` being what metadata_after answered for them,
-- and moves the session between index sets: `index` is {sessions key, session id, created ms}.
local function write_metadata(session_key, argv, first, last, bytes, index)
  if last < first then return end
  local before = metadata_index_sets(session_key, index[1])
  for i = first, last, 2 do
    if argv[i + 1] == '' then
      redis.call('HDEL', session_key, METADATA_FIELD .. argv[i])
    else
      redis.call('HSET', session_key, METADATA_FIELD .. argv[i], argv[i + 1])
    end
  end
  redis.call('HSET', session_key, 'metadata_bytes', bytes)
  for _, set in ipairs(before) do redis.call('ZREM', set, index[2]) end
  for _, set in ipairs(metadata_index_sets(session_key, index[1])) do redis.call('ZADD', set, index[3], index[2]) end
end

-- The session's metadata as one JSON object string, built from the raw values.
local function metadata_json(session_key)
  local flat = redis.call('HGETALL', session_key)
  local parts = {}
  for i = 1, #flat, 2 do
    if string.sub(flat[i], 1, #METADATA_FIELD) == METADATA_FIELD then
      parts[#parts + 1] = string.sub(flat[i], #METADATA_FIELD + 1) .. ':' .. flat[i + 1]
    end
  end
  return '{' .. table.concat(parts, ',') .. '}'
end
