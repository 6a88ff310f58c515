--[[
  Updates a schedule fire record. A record already completed or failed is final and stays as
  it is. While the record has a run and is not final, the run links back to it so the run's
  end can settle it; a final record drops that link.

  KEYS[1] fire records hash of the schedule (fire id -> record JSON)
  KEYS[2] run links hash of the tenant (run id -> '<schedule id> <fire id>')

  ARGV[1] fire id   ARGV[2] status ('' keeps it)   ARGV[3] run id ('' keeps it)
  ARGV[4] error ('' keeps it)   ARGV[5] schedule id

  Returns
     {1} updated
     {0} no such record, or the record is final
]]
--@include constants
local doc = redis.call('HGET', KEYS[1], ARGV[1])
if not doc then return {0} end
local record = cjson.decode(doc)
if FINAL_FIRE_STATUS[record.status] then return {0} end
if ARGV[2] ~= '' then record.status = ARGV[2] end
if ARGV[3] ~= '' then record.run_id = ARGV[3] end
if ARGV[4] ~= '' then record.error = ARGV[4] end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(record))
if record.run_id then
  if FINAL_FIRE_STATUS[record.status] then
    redis.call('HDEL', KEYS[2], record.run_id)
  else
    redis.call('HSET', KEYS[2], record.run_id, ARGV[5] .. ' ' .. ARGV[1])
  end
end
return {1}
