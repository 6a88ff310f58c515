--[[
  Records the start of a schedule fire, once per fire id, and moves the schedule's next_run.
  The history list keeps the newest ARGV[4] fire ids; older records (and the run links that
  would settle them) are dropped in the same step.

  KEYS[1] schedule hash
  KEYS[2] fire records hash of the schedule (fire id -> record JSON)
  KEYS[3] history list of the schedule (fire ids, newest first)
  KEYS[4] run links hash of the tenant (run id -> '<schedule id> <fire id>')

  ARGV[1] fire id   ARGV[2] record JSON   ARGV[3] next_run (RFC 3339)   ARGV[4] history cap

  Returns (outcomes, not failures)
    {1} recorded
    {0} this fire id was already recorded (a re-delivered tick); nothing changed
    {2} no such schedule
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return {2} end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return {0} end
redis.call('LPUSH', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[1], 'next_run', ARGV[3])
local cap = tonumber(ARGV[4])
while redis.call('LLEN', KEYS[3]) > cap do
  local dropped = redis.call('RPOP', KEYS[3])
  local doc = redis.call('HGET', KEYS[2], dropped)
  if doc then
    local run_id = cjson.decode(doc).run_id
    if run_id then redis.call('HDEL', KEYS[4], run_id) end
    redis.call('HDEL', KEYS[2], dropped)
  end
end
return {1}
