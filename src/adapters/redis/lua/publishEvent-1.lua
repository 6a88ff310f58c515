--[[
  Publishes one run event (see includes/publishEvent.lua).

  KEYS[1] the tenant's event stream

  ARGV[1] events retained (XADD MAXLEN ~)
  ARGV[2] the event as JSON
  ARGV[3] the events channel
  ARGV[4] the tenant as a JSON string (with its quotes)

  Returns the new stream id, which is the event id.
]]
--@include publishEvent
return publish_event(KEYS[1], ARGV[1], ARGV[3], ARGV[4], ARGV[2])
