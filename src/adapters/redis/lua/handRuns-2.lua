--[[
  Marks jobs as handed to BullMQ (the caller added them): from then on BullMQ alone holds them,
  and one missing there was removed (by hand, say), not lost before its add. A job released
  meanwhile (it ran and ended already) is not marked.

  KEYS[1] admitted (includes/admitRuns.lua)   KEYS[2] handed: set of the admitted job ids added to BullMQ

  ARGV[1..n] job ids

  Returns the number of jobs marked.
]]
local marked = 0
for _, id in ipairs(ARGV) do
  if redis.call('HEXISTS', KEYS[1], id) == 1 then marked = marked + redis.call('SADD', KEYS[2], id) end
end
return marked
