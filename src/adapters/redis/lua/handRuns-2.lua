--[[
  Marks jobs as handed to BullMQ: from then on BullMQ alone holds them, and one missing there
  was removed (by hand, say), not lost before its add. Sent in one pipeline behind the adds, it
  marks only a job BullMQ has (an add that failed leaves its job unmarked, the reconcile pass's
  to add again) and one still admitted (a job released meanwhile ran and ended already).

  KEYS[1] admitted (includes/admitRuns.lua)   KEYS[2] handed: set of the admitted job ids added to BullMQ

  ARGV[1] the prefix of BullMQ's job hashes (the job id follows)   ARGV[2..n] job ids

  Returns the number of jobs marked.
]]
local marked = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  if redis.call('HEXISTS', KEYS[1], id) == 1 and redis.call('EXISTS', ARGV[1] .. id) == 1 then
    marked = marked + redis.call('SADD', KEYS[2], id)
  end
end
return marked
