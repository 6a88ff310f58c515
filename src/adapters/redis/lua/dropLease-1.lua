--[[
  Lets a lease go when the holder named has it, so another process takes it at once; a lease
  that lapsed and was taken by another holder meanwhile stays theirs.

  KEYS[1] the lease (a string: its holder; expiring)

  ARGV[1] holder

  Returns
    1 dropped
    0 the holder did not have it
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
