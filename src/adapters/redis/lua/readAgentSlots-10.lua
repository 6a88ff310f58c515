--[[
  Reads where the capped agents' runs stand, for the metrics; writes nothing.

  KEYS[1] jobs   KEYS[2] ring   KEYS[3] credit   KEYS[4] queued   KEYS[5] running
  KEYS[6] admitted   KEYS[7] delayed   KEYS[8] workers   KEYS[9] agents   KEYS[10] held
  (includes/admitRuns.lua says what each holds; this reads KEYS[1], KEYS[9], KEYS[10] and the
  agents' rings and parked lists under KEYS[9])

  ARGV[1..n] the ids of the capped agents

  Returns two counts per agent, in ARGV's order: its runs admitted (the slots it holds but those
  handed to jobs still waiting in their tenant's queue), and its jobs parked at its cap.
]]
--@include admitRuns
local handed = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[10])) do
  local data = redis.call('HGET', KEYS[1], id)
  if data then
    local agent = cjson.decode(data).agent_id
    handed[agent] = (handed[agent] or 0) + 1
  end
end
local reply = {}
for _, agent in ipairs(ARGV) do
  local held = tonumber(redis.call('HGET', KEYS[9], agent) or '0')
  local parked = 0
  for _, tenant in ipairs(redis.call('LRANGE', agent_ring(agent), 0, -1)) do
    parked = parked + redis.call('LLEN', parked_list(agent, tenant))
  end
  reply[#reply + 1] = math.max(0, held - (handed[agent] or 0))
  reply[#reply + 1] = parked
end
return reply
