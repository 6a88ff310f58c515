--[[
  One page of a tenant's sessions, newest first, as one JSON array string: one round trip and
  one reply to decode instead of a pipeline of HGETALLs (whose decoding dominated the route's
  CPU profile).

  KEYS[1] sessions sorted set of the tenant (all, or one agent's)

  ARGV[1] prefix of the session hashes (`<prefix>:{tenant}:session:`; same hash tag, so the
          same Cluster slot as KEYS[1])
  ARGV[2] start   ARGV[3] stop (ZREVRANGE indices)   ARGV[4] tenant id

  Returns a JSON array of Session objects; ids whose hash is gone are skipped. A session's
  metadata fields are read only when it has any (metadata_bytes).
]]
--@include constants
--@include sessionMetadata
local ids = redis.call('ZREVRANGE', KEYS[1], ARGV[2], ARGV[3])
local out = {}
for _, id in ipairs(ids) do
  local f = redis.call('HMGET', ARGV[1] .. id, 'agent_id', 'created_at', 'updated_at', 'metadata_bytes')
  if f[1] then
    local metadata = '{}'
    if tonumber(f[4] or '0') > 0 then metadata = metadata_json(ARGV[1] .. id) end
    out[#out + 1] = '{"id":' .. cjson.encode(id) ..
      ',"agent_id":' .. cjson.encode(f[1]) ..
      ',"tenant_id":' .. cjson.encode(ARGV[4]) ..
      ',"created_at":' .. cjson.encode(f[2] or '') ..
      ',"updated_at":' .. cjson.encode(f[3] or f[2] or '') ..
      ',"metadata":' .. metadata .. '}'
  end
end
return '[' .. table.concat(out, ',') .. ']'
