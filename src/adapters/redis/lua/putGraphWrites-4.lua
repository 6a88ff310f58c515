--[[
  Stores pending writes against a LangGraph checkpoint. A write whose field (task and index) is
  stored already stays as it was, unless its index is negative (LangGraph's special channels:
  errors, interrupts), which replaces. The checkpoint need not be stored yet: LangGraph sends
  a checkpoint and its writes concurrently (putGraphCheckpoint prunes writes left behind).

  Nothing is written when the session is required and gone.

  KEYS[1] write index zset   KEYS[2] writes hash   KEYS[3] the thread's session hash
  KEYS[4] records hash (the thread's version)
  ARGV[1] thread id   ARGV[2] '1' when the session must exist
  ARGV[3..] field, value, replace ("1"/"0"), ...

  Returns {0}, or {THREAD_GONE, thread id} (codes of scripts.ts)
]]
--@include constants
--@include graphCheckpoint
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[3]) == 0 then return {THREAD_GONE, ARGV[1]} end
graph_touch(KEYS[4])
graph_put_writes(KEYS[1], KEYS[2], 3, #ARGV)
return {0}
