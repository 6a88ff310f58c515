--[[
  Deletes a schedule with its fire history and the run links that would settle its records.

  KEYS[1] schedule hash
  KEYS[2] schedules sorted set of the tenant
  KEYS[3] fire records hash of the schedule (fire id -> record JSON)
  KEYS[4] history list of the schedule
  KEYS[5] run links hash of the tenant (run id -> '<schedule id> <fire id>')

  ARGV[1] schedule id

  Returns
    {1} deleted
    {0} no such schedule
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
for _, doc in ipairs(redis.call('HVALS', KEYS[3])) do
  local run_id = cjson.decode(doc).run_id
  if run_id then redis.call('HDEL', KEYS[5], run_id) end
end
redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[2], ARGV[1])
return {1}
