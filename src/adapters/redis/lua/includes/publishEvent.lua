--[[
  Appends a run event (its JSON) to the tenant's stream and announces it on the events
  channel as the StoredEvent JSON {"id", "tenant", "event"}, in one step: announcements then
  come in stream-id order, which the subscribers rely on to skip what a catch-up already
  delivered. `stop` (JSON, optional) rides on the announcement only, never in the stream: the
  run and its state as it stopped, for a replica waiting on it (StoredEvent.stop). Returns the stream id, which is the event id. ANNOUNCE is PUBLISH, or SPUBLISH on
  a cluster (the channel is then the tenant's, in the stream's slot).

  Retention (exact, the same as the memory adapter's): the stream keeps at most `caps.retain`
  events, `caps.bytes` bytes of event JSON and `caps.run_bytes` bytes of one run's events.
  Past the run's cap its own oldest events go (XDEL in the middle of the stream), past the
  tenant's the stream's oldest. Bytes are the JSON's length in bytes (UTF-8), Lua's `#`.
  The accounting lives beside the stream, in its slot:
    stream entry   e = the event JSON, r = its run id
    bytes hash     tenant = bytes of the stream, run:<run id> = bytes of that run's events
    by-run zset    one member per event, all of score 0, read lexically:
                   <run id> NUL <ms, 15 digits>-<seq, 10 digits> NUL <id> NUL <bytes>
  An entry without `r` (written before the byte caps) is counted by neither and dropped by count.
]]
--@include announce

local function event_member(run, id, bytes)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return run .. '\0' .. string.rep('0', 15 - #ms) .. ms .. '-' .. string.rep('0', 10 - #seq) .. seq .. '\0' .. id .. '\0' .. bytes
end

-- Forgets a dropped event of `run` in the accounting; returns the tenant's bytes left.
local function forget_event(keys, run, id, bytes)
  redis.call('ZREM', keys.by_run, event_member(run, id, bytes))
  if redis.call('HINCRBY', keys.bytes, 'run:' .. run, -bytes) <= 0 then redis.call('HDEL', keys.bytes, 'run:' .. run) end
  return redis.call('HINCRBY', keys.bytes, 'tenant', -bytes)
end

--[[
  keys: { stream, bytes, by_run }; caps: { retain, bytes, run_bytes } (numbers or strings);
  run: the event's run id.
]]
local function publish_event(keys, caps, channel, tenant_json, run, json, stop)
  local id = redis.call('XADD', keys.stream, '*', 'e', json, 'r', run)
  local size = #json
  redis.call('ZADD', keys.by_run, 0, event_member(run, id, size))
  local run_bytes = redis.call('HINCRBY', keys.bytes, 'run:' .. run, size)
  local bytes = redis.call('HINCRBY', keys.bytes, 'tenant', size)
  local run_cap, cap, retain = tonumber(caps.run_bytes), tonumber(caps.bytes), tonumber(caps.retain)
  -- The run's oldest, while the run is over its cap.
  while run_bytes > run_cap do
    local oldest = redis.call('ZRANGE', keys.by_run, '[' .. run .. '\0', '(' .. run .. '\1', 'BYLEX', 'LIMIT', 0, 1)[1]
    if not oldest then break end
    local old_id, old_bytes = string.match(oldest, '%z([^%z]+)%z(%d+)$')
    old_bytes = tonumber(old_bytes)
    redis.call('XDEL', keys.stream, old_id)
    bytes = forget_event(keys, run, old_id, old_bytes)
    run_bytes = run_bytes - old_bytes
  end
  -- The tenant's oldest, while over the count or the byte cap.
  while bytes > cap or redis.call('XLEN', keys.stream) > retain do
    local oldest = redis.call('XRANGE', keys.stream, '-', '+', 'COUNT', 1)[1]
    if not oldest then break end
    redis.call('XDEL', keys.stream, oldest[1])
    local fields = oldest[2]
    local old_json, old_run
    for i = 1, #fields, 2 do
      if fields[i] == 'e' then old_json = fields[i + 1] elseif fields[i] == 'r' then old_run = fields[i + 1] end
    end
    if old_run and old_json then bytes = forget_event(keys, old_run, oldest[1], #old_json) end
  end
  local tail = '}'
  if stop then tail = ',"stop":' .. stop .. '}' end
  redis.call(ANNOUNCE, channel, '{"id":"' .. id .. '","tenant":' .. tenant_json .. ',"event":' .. json .. tail)
  return id
end
