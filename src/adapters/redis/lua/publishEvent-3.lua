--[[
  Publishes one run event (see includes/publishEvent.lua).

  KEYS[1] the tenant's event stream   KEYS[2] the tenant's event bytes hash
  KEYS[3] an earlier version's index of events by run, deleted (includes/publishEvent.lua)

  ARGV[1] events retained
  ARGV[2] the event as JSON
  ARGV[3] the events channel
  ARGV[4] the tenant as a JSON string (with its quotes)
  ARGV[5] event bytes retained per tenant
  ARGV[6] event bytes retained per run
  ARGV[7] the event's run id

  Returns the new stream id, which is the event id.
]]
--@include publishEvent
return publish_event({ stream = KEYS[1], bytes = KEYS[2], by_run = KEYS[3] }, { retain = ARGV[1], bytes = ARGV[5], run_bytes = ARGV[6] },
  ARGV[3], ARGV[4], ARGV[7], ARGV[2])
