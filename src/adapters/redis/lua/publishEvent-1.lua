--[[
  Appends a run event to its tenant's capped stream and announces it on the events channel,
  in one step: announcements then come in stream-id order, which the subscribers rely on to
  skip what a catch-up already delivered.

  KEYS[1] the tenant's event stream

  ARGV[1] events retained (XADD MAXLEN ~)
  ARGV[2] the event as JSON
  ARGV[3] the events channel
  ARGV[4] the tenant as a JSON string (with its quotes)

  Returns the new stream id, which is the event id. The announcement is the StoredEvent
  JSON {"id", "tenant", "event"}.
]]
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[2])
redis.call('PUBLISH', ARGV[3], '{"id":"' .. id .. '","tenant":' .. ARGV[4] .. ',"event":' .. ARGV[2] .. '}')
return id
