--[[
  Appends a run event (its JSON) to the tenant's capped stream and announces it on the events
  channel as the StoredEvent JSON {"id", "tenant", "event"}, in one step: announcements then
  come in stream-id order, which the subscribers rely on to skip what a catch-up already
  delivered. `stop` (JSON, optional) rides on the announcement only, never in the stream: the
  run and its state as it stopped, for a replica waiting on it (StoredEvent.stop). Returns the stream id, which is the event id. ANNOUNCE is PUBLISH, or SPUBLISH on
  a cluster (the channel is then the tenant's, in the stream's slot).
]]
--@include announce
local function publish_event(stream_key, retain, channel, tenant_json, json, stop)
  local id = redis.call('XADD', stream_key, 'MAXLEN', '~', retain, '*', 'e', json)
  local tail = '}'
  if stop then tail = ',"stop":' .. stop .. '}' end
  redis.call(ANNOUNCE, channel, '{"id":"' .. id .. '","tenant":' .. tenant_json .. ',"event":' .. json .. tail)
  return id
end
