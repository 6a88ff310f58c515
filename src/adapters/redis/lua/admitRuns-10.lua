--[[
  A worker's heartbeat and the admission step: records (or removes) the worker's slots, moves
  due delayed jobs to their turn, and admits jobs while slots are free.

  KEYS[1] jobs   KEYS[2] ring   KEYS[3] credit   KEYS[4] queued   KEYS[5] running
  KEYS[6] admitted   KEYS[7] delayed   KEYS[8] workers   KEYS[9] agents   KEYS[10] held
  (includes/admitRuns.lua says what each holds)

  ARGV[1] prefix of the tenants' pending lists   ARGV[2] policy (JSON)
  ARGV[3..5] how a job admitted is handed to BullMQ (includes/admitRuns.lua)
  ARGV[6] the worker ("<worker id> <slots>"), '' for none
  ARGV[7] how long its heartbeat lasts (ms); 0 removes the worker

  Returns the JSON of each job admitted and not handed to BullMQ here (includes/admitRuns.lua).
]]
--@include admitRuns
local prefix, now = ARGV[1], server_now()
local worker, lasts = ARGV[6], tonumber(ARGV[7])
if worker ~= '' then
  if lasts > 0 then redis.call('ZADD', KEYS[8], now + lasts, worker) else redis.call('ZREM', KEYS[8], worker) end
end
return admit(prefix, now, read_policy())
