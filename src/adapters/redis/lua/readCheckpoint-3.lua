--[[
  The latest checkpoint of a session in one step when its state is small: its history entry
  and the state as one JSON object. A large state (more than SMALL_STATE_KEYS keys) is not read here, where it
  would hold Redis for O(state): the caller scans it in chunks instead (HSCAN) and uses the
  history entries to make the scan consistent.

  KEYS[1] session hash   KEYS[2] state hash   KEYS[3] checkpoints list

  Returns
    {0} the session has no checkpoint (or does not exist)
    {1, entry JSON, state JSON}
    {2, seq} the state is large: scan it
]]
--@include constants
--@include stateJson
local meta = redis.call('HMGET', KEYS[1], 'seq', 'state_keys')
local seq = tonumber(meta[1] or '0')
if seq == 0 then return {0} end
if tonumber(meta[2] or '0') > SMALL_STATE_KEYS then return {2, seq} end
return {1, redis.call('LINDEX', KEYS[3], -1), state_json(KEYS[2])}
