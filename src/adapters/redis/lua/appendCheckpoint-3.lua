--[[
  Appends a checkpoint to a session atomically: seq_num = latest + 1 and state = the latest
  state shallow-merged with the patch. State values are kept as raw JSON strings (never
  re-encoded by cjson, which would turn [] into {} and round large numbers).

  KEYS[1] session hash     (fields seq, run_status, updated_at)
  KEYS[2] state hash       (state key -> raw JSON of its value)
  KEYS[3] checkpoints list (checkpoint JSON documents, oldest first)

  ARGV[1] session id
  ARGV[2] checkpoint id
  ARGV[3] node id of the new checkpoint, '' to keep the latest one
  ARGV[4] created_at (RFC 3339)
  ARGV[5] '1' to start from an empty state instead of merging
  ARGV[6] expected latest seq_num, '' for none
  ARGV[7] '1' to refuse while the session's run is running
  ARGV[8..] pairs: state key, raw JSON value

  Returns {1, checkpoint JSON} on success, or
    {-1} no such session
    {-2} the session has no checkpoint and no node id was given
    {-3} latest seq_num differs from ARGV[6]
    {-4} a run of the session is running
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
local node = ARGV[3]
if node == '' then
  if seq == 0 then return {-2} end
  node = redis.call('HGET', KEYS[1], 'node_id')
end
if ARGV[6] ~= '' and tonumber(ARGV[6]) ~= seq then return {-3} end
if ARGV[7] == '1' and redis.call('HGET', KEYS[1], 'run_status') == 'running' then return {-4} end

if ARGV[5] == '1' then redis.call('DEL', KEYS[2]) end
for i = 8, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end

local parts = {}
local flat = redis.call('HGETALL', KEYS[2])
for i = 1, #flat, 2 do
  parts[#parts + 1] = cjson.encode(flat[i]) .. ':' .. flat[i + 1]
end

seq = seq + 1
local doc = '{"session_id":' .. cjson.encode(ARGV[1]) ..
  ',"checkpoint_id":' .. cjson.encode(ARGV[2]) ..
  ',"node_id":' .. cjson.encode(node) ..
  ',"seq_num":' .. seq ..
  ',"created_at":' .. cjson.encode(ARGV[4]) ..
  ',"state":{' .. table.concat(parts, ',') .. '}}'
redis.call('RPUSH', KEYS[3], doc)
redis.call('HSET', KEYS[1], 'seq', seq, 'node_id', node, 'updated_at', ARGV[4])
return {1, doc}
