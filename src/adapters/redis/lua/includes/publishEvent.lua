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

-- Members written (or removed) by one ZADD (ZREM) at most.
local MEMBERS_PER_CALL = 500

--[[
  The events of one script call, published one by one as the memory adapter does (each event
  appended, its run's cap then the tenant's enforced, then announced), with the accounting kept
  in locals and written once by `finish` (which the script calls after its last event): the
  length read once, the two byte counts raised once by what the call will publish (`expected`,
  the bytes of its events; `finish` corrects any difference), the by-run members added and
  removed in one ZADD and one ZREM, each dropped run's bytes lowered once. What is stored after
  `finish` is what publishing them one at a time stores.

  keys: { stream, bytes, by_run }; caps: { retain, bytes, run_bytes } (numbers or strings);
  run: the events' run id.
]]
local function event_writer(keys, caps, channel, tenant_json, run, expected)
  local run_cap, cap, retain = tonumber(caps.run_bytes), tonumber(caps.bytes), tonumber(caps.retain)
  local run_field = 'run:' .. run
  -- Started at the first event: the stream's length, the tenant's and the run's bytes (their
  -- true values here; written = what the bytes hash holds).
  local started, length, tenant_bytes, run_bytes, tenant_written, run_written
  local added, removed = {}, {}
  -- Bytes dropped from runs other than `run`, by run, and those runs in the order they were met.
  local dropped, dropped_runs = {}, {}
  local function write_members()
    if #added > 0 then
      local args = {}
      for _, member in ipairs(added) do args[#args + 1] = 0; args[#args + 1] = member end
      redis.call('ZADD', keys.by_run, unpack(args))
      added = {}
    end
    if #removed > 0 then
      redis.call('ZREM', keys.by_run, unpack(removed))
      removed = {}
    end
  end
  -- Forgets a dropped event of `old_run` (its member removed with the next write_members).
  local function forget(old_run, id, bytes)
    removed[#removed + 1] = event_member(old_run, id, bytes)
    -- Lua's unpack takes a few thousand values: a large event may drop many small ones.
    if #removed >= MEMBERS_PER_CALL then write_members() end
    tenant_bytes = tenant_bytes - bytes
    if old_run == run then
      -- At 0 or below the field goes (HDEL) and counts from 0 again.
      run_bytes = math.max(run_bytes - bytes, 0)
    else
      if not dropped[old_run] then dropped_runs[#dropped_runs + 1] = old_run end
      dropped[old_run] = (dropped[old_run] or 0) + bytes
    end
  end
  local function publish(json, stop)
    local size = #json
    if not started then
      started = true
      length = redis.call('XLEN', keys.stream)
      local by = math.max(expected or 0, size)
      run_written = redis.call('HINCRBY', keys.bytes, run_field, by)
      tenant_written = redis.call('HINCRBY', keys.bytes, 'tenant', by)
      run_bytes, tenant_bytes = run_written - by, tenant_written - by
    end
    local id = redis.call('XADD', keys.stream, '*', 'e', json, 'r', run)
    length = length + 1
    added[#added + 1] = event_member(run, id, size)
    if #added >= MEMBERS_PER_CALL then write_members() end
    run_bytes = run_bytes + size
    tenant_bytes = tenant_bytes + size
    -- The run's oldest, while the run is over its cap (rare: the members are written first).
    while run_bytes > run_cap do
      write_members()
      local oldest = redis.call('ZRANGE', keys.by_run, '[' .. run .. '\0', '(' .. run .. '\1', 'BYLEX', 'LIMIT', 0, 1)[1]
      if not oldest then break end
      local old_id, old_bytes = string.match(oldest, '%z([^%z]+)%z(%d+)$')
      length = length - redis.call('XDEL', keys.stream, old_id)
      forget(run, old_id, tonumber(old_bytes))
    end
    -- The tenant's oldest, while over the count or the byte cap.
    while tenant_bytes > cap or length > retain do
      local oldest = redis.call('XRANGE', keys.stream, '-', '+', 'COUNT', 1)[1]
      if not oldest then break end
      length = length - redis.call('XDEL', keys.stream, oldest[1])
      local fields = oldest[2]
      local old_json, old_run
      for i = 1, #fields, 2 do
        if fields[i] == 'e' then old_json = fields[i + 1] elseif fields[i] == 'r' then old_run = fields[i + 1] end
      end
      if old_run and old_json then forget(old_run, oldest[1], #old_json) end
    end
    local tail = '}'
    if stop then tail = ',"stop":' .. stop .. '}' end
    redis.call(ANNOUNCE, channel, '{"id":"' .. id .. '","tenant":' .. tenant_json .. ',"event":' .. json .. tail)
    return id
  end
  local function finish()
    if not started then return end
    write_members()
    for _, old_run in ipairs(dropped_runs) do
      local field = 'run:' .. old_run
      if redis.call('HINCRBY', keys.bytes, field, -dropped[old_run]) <= 0 then redis.call('HDEL', keys.bytes, field) end
    end
    dropped, dropped_runs = {}, {}
    if run_bytes <= 0 then
      redis.call('HDEL', keys.bytes, run_field)
    elseif run_bytes ~= run_written then
      redis.call('HINCRBY', keys.bytes, run_field, run_bytes - run_written)
    end
    run_written = run_bytes
    if tenant_bytes ~= tenant_written then redis.call('HINCRBY', keys.bytes, 'tenant', tenant_bytes - tenant_written) end
    tenant_written = tenant_bytes
  end
  return { publish = publish, finish = finish }
end

-- One event, published and accounted (see event_writer); returns its stream id.
local function publish_event(keys, caps, channel, tenant_json, run, json, stop)
  local writer = event_writer(keys, caps, channel, tenant_json, run, #json)
  local id = writer.publish(json, stop)
  writer.finish()
  return id
end
