--[[
  Takes a lease for a holder, or extends it when that holder has it, in one step: a lease that
  another holder took between a read and a write is never overwritten.

  KEYS[1] the lease (a string: its holder; expiring)

  ARGV[1] holder   ARGV[2] lease time (ms)

  Returns
    1 the holder holds the lease for ARGV[2] ms from now
    0 another holder has it
]]
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
