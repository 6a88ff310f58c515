--[[
  A worker's heartbeat and the admission step: records (or removes) the worker's slots, moves
  due delayed jobs to their turn, and admits jobs while slots are free.

  KEYS[1] jobs   KEYS[2] ring   KEYS[3] credit   KEYS[4] queued   KEYS[5] running
  KEYS[6] admitted   KEYS[7] delayed   KEYS[8] workers   KEYS[9] agents   KEYS[10] held
  (includes/admitRuns.lua says what each holds)

  ARGV[1] prefix of the tenants' pending lists   ARGV[2] policy (JSON)
  ARGV[3] the worker ("<worker id> <slots>"), '' for none
  ARGV[4] how long its heartbeat lasts (ms); 0 removes the worker

  Returns the JSON of each job admitted and not handed to BullMQ here (includes/admitRuns.lua).
]]
--@include admitRuns
local prefix, now, policy = ARGV[1], server_now(), cjson.decode(ARGV[2])
local lasts = tonumber(ARGV[4])
if ARGV[3] ~= '' then
  if lasts > 0 then redis.call('ZADD', KEYS[8], now + lasts, ARGV[3]) else redis.call('ZREM', KEYS[8], ARGV[3]) end
end
return admit(prefix, now, policy)
