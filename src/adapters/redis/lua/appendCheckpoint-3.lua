--[[
  Appends a checkpoint to a session atomically: seq_num = latest + 1 and state = the latest
  state shallow-merged with the patch.

  KEYS[1] session hash     (fields seq, node_id, run_status, updated_at)
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

  Returns {1, checkpoint JSON} on success, or (codes of scripts.ts)
    {NOT_FOUND} no such session, or it has no checkpoint and no node id was given
    {SEQ_MISMATCH} latest seq_num differs from ARGV[6]
    {RUN_RUNNING} a run of the session is running
]]
--@include constants
--@include appendCheckpoint
if redis.call('EXISTS', KEYS[1]) == 0 then return {NOT_FOUND} end
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
local node = ARGV[3]
if node == '' then
  if seq == 0 then return {NOT_FOUND} end
  node = redis.call('HGET', KEYS[1], 'node_id')
end
if ARGV[6] ~= '' and tonumber(ARGV[6]) ~= seq then return {SEQ_MISMATCH} end
if ARGV[7] == '1' and redis.call('HGET', KEYS[1], 'run_status') == 'running' then return {RUN_RUNNING} end
return {1, append_checkpoint(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], node, ARGV[4], ARGV[5] == '1', ARGV, 8)}
