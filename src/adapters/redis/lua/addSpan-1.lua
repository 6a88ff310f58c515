--[[
  Appends a span to its session's list, keeping the newest ARGV[2] (a session reused for
  months keeps a bounded trace).

  KEYS[1] spans list of the session

  ARGV[1] span JSON   ARGV[2] spans retained

  Returns the list's length.
]]
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
return {1}
