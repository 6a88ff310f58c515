--[[
  Takes a run's waiting jobs (pending or delayed) out of the queue: its run ended before its
  turn. Jobs already admitted stay (their worker sees the run ended and releases them).

  KEYS[1] jobs   KEYS[2] ring   KEYS[3] credit   KEYS[4] queued   KEYS[5] running
  KEYS[6] admitted   KEYS[7] delayed   KEYS[8] workers   (includes/admitRuns.lua says what each holds)

  ARGV[1] prefix of the tenants' pending lists   ARGV[2..n] job ids

  Returns the number of jobs taken out.
]]
--@include admitRuns
local withdrawn = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  local data = redis.call('HGET', KEYS[1], id)
  if data then
    local tenant = cjson.decode(data).tenant
    redis.call('HDEL', KEYS[1], id)
    add_count(KEYS[4], tenant, -1)
    if redis.call('ZREM', KEYS[7], id) == 0 then
      local list = ARGV[1] .. tenant
      redis.call('LREM', list, 1, id)
      if redis.call('LLEN', list) == 0 then leave_ring(tenant) end
    end
    withdrawn = withdrawn + 1
  end
end
return withdrawn
