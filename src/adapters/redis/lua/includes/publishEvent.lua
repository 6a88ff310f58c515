--[[
  Appends a run event (its JSON) to the tenant's stream and announces it on the events
  channel as the StoredEvent JSON {"id", "tenant", "event"}, in one step: announcements then
  come in stream-id order, which the subscribers rely on to skip what a catch-up already
  delivered. `stop` (JSON, optional) rides on the announcement only, never in the stream: the
  run and its state as it stopped, for a replica waiting on it (StoredEvent.stop). Returns the
  stream id, which is the event id. ANNOUNCE is PUBLISH, or SPUBLISH on a cluster (the channel
  is then the tenant's, in the stream's slot).

  Retention (the same as the memory adapter's): the stream keeps the newest `caps.retain`
  events, at most `caps.bytes` bytes of event JSON and `caps.run_bytes` bytes of one run's
  events. Past the run's cap its own oldest events go (XDEL in the middle of the stream), past
  the tenant's byte cap the stream's oldest; past the count cap they go in a batch once the
  stream holds its slack more (retain / EVENT_COUNT_SLACK_DIVISOR, domain eventCountSlack):
  one XRANGE and one XTRIM for the batch, where one event each would cost both. Bytes are the
  JSON's length in bytes (UTF-8), Lua's `#`.
  The accounting lives beside the stream, in its slot:
    stream entry   e = the event JSON, r = its run id
    bytes hash     tenant = bytes of the stream, run:<run id> = bytes of that run's events,
                   first:<run id> = where that run's oldest event is looked for (an XRANGE start:
                   its first event's id, or "(" and the last id looked at when its cap dropped
                   the oldest; no event of the run is older). Both run fields exist together,
                   while the run has events in the stream.
  An entry without `r` (written before the byte caps) is counted by neither and dropped by count.
  The key `by_run` is an index of events by run that earlier versions kept: deleted when the
  stream is next trimmed.

  A script that publishes several events of one run (stepRun) keeps their accounting in Lua
  (event_batch): it reads the counters and the stream's length once, drops past the caps as
  each event comes, as publishing them one by one would, and writes the counters back once at
  the end (settle). Its events then cost HMGET, XLEN and HSET beside their XADDs and
  announcements; a drop by the run's cap costs the XRANGE that finds the run's oldest and its
  XDEL, a batch dropped by the tenant's caps its XRANGE, XTRIM and an HINCRBY for each other
  run it held.
]]
--@include announce
--@include eventCaps

-- Most of the stream's oldest entries read at once when trimming (a lowered cap trims in several).
local DROP_BATCH = 1000
-- Most entries read at once looking for a run's oldest event (the first read takes one: the
-- run's oldest is mostly next; each read without it doubles, its events may be large).
local RUN_SCAN_MAX = 64

-- A counter written back with HSET: an integer's digits, never Lua's "1e+15" or "197.0".
local function integer_text(n)
  return string.format('%d', n)
end

-- The JSON and the run id of a stream entry's fields.
local function entry_fields(fields)
  local json, run
  for i = 1, #fields, 2 do
    if fields[i] == 'e' then json = fields[i + 1] elseif fields[i] == 'r' then run = fields[i + 1] end
  end
  return json, run
end

--[[
  Publishes events of `run` whose accounting is kept in Lua until settle(): each publish
  appends its event, drops what the caps no longer hold and announces it at once, so the
  stream, its announcements and what a cap drops are those of publish_event called for each
  event in turn; only the counters wait for settle(), which writes them with one HSET. The
  script must call settle() before it returns once it has published (its events would stay
  uncounted, and be counted off when dropped), and write nothing else to these keys in between.

  keys: { stream, bytes, by_run }; caps: { retain, bytes, run_bytes } (numbers or strings);
  run: the events' run id.
]]
local function event_batch(keys, caps, channel, tenant_json, run)
  local run_cap, cap, retain = tonumber(caps.run_bytes), tonumber(caps.bytes), tonumber(caps.retain)
  local slack = math.floor(retain / EVENT_COUNT_SLACK_DIVISOR)
  local run_field, first_field = 'run:' .. run, 'first:' .. run
  -- The counters as the hash would hold them had each event been counted: loaded by the first
  -- event after a settle. `run_held` mirrors whether the hash has the run's fields (they go
  -- when the run's bytes drop to 0 or below); `first` is its first:<run> (changed: `moved`).
  local loaded, run_bytes, run_held, bytes, length, first, moved = false, 0, false, 0, 0, nil, false

  -- Forgets a dropped event of the run in the counters.
  local function forget_own(size)
    run_bytes = run_bytes - size
    if run_bytes <= 0 then run_bytes, run_held, first = 0, false, nil end
  end

  -- Drops the run's oldest events while it is over its cap, looking for them from `first`.
  local function drop_run_oldest()
    local count = 1
    while run_bytes > run_cap do
      local entries = redis.call('XRANGE', keys.stream, first or '-', '+', 'COUNT', integer_text(count))
      if #entries == 0 then return end
      for _, entry in ipairs(entries) do
        local old_id = entry[1]
        local old_json, old_run = entry_fields(entry[2])
        first, moved = '(' .. old_id, true
        if old_run == run and old_json then
          length = length - redis.call('XDEL', keys.stream, old_id)
          bytes = bytes - #old_json
          forget_own(#old_json)
          if run_bytes <= run_cap then return end
        end
      end
      count = math.min(count * 2, RUN_SCAN_MAX)
    end
  end

  -- Drops the stream's oldest, past the byte cap or past the count cap and its slack, until
  -- both hold again: a batch at a time (one XRANGE, one XTRIM), other runs' counters written once.
  local function trim()
    if bytes <= cap and length <= retain + slack then return end
    redis.call('UNLINK', keys.by_run)
    while bytes > cap or length > retain do
      local oldest = redis.call('XRANGE', keys.stream, '-', '+', 'COUNT', integer_text(math.min(math.max(length - retain, 1), DROP_BATCH)))
      local dropped, others, other_bytes = 0, {}, {}
      for _, entry in ipairs(oldest) do
        if bytes <= cap and length <= retain then break end
        dropped, length = dropped + 1, length - 1
        local old_json, old_run = entry_fields(entry[2])
        if old_run and old_json then
          local old_bytes = #old_json
          bytes = bytes - old_bytes
          if old_run ~= run then
            if not other_bytes[old_run] then others[#others + 1], other_bytes[old_run] = old_run, 0 end
            other_bytes[old_run] = other_bytes[old_run] + old_bytes
          else
            forget_own(old_bytes)
          end
        end
      end
      if dropped == 0 then return end
      -- The stream's oldest `dropped` entries are those just read: trimmed to what is left.
      redis.call('XTRIM', keys.stream, 'MAXLEN', '=', integer_text(length))
      for _, other in ipairs(others) do
        if redis.call('HINCRBY', keys.bytes, 'run:' .. other, integer_text(-other_bytes[other])) <= 0 then
          redis.call('HDEL', keys.bytes, 'run:' .. other, 'first:' .. other)
        end
      end
    end
  end

  local function publish(json, stop)
    local id = redis.call('XADD', keys.stream, '*', 'e', json, 'r', run)
    local size = #json
    if loaded then
      length = length + 1
    else
      local counts = redis.call('HMGET', keys.bytes, run_field, 'tenant', first_field)
      run_bytes, run_held, bytes = tonumber(counts[1]) or 0, counts[1] ~= false, tonumber(counts[2]) or 0
      first = run_held and counts[3] or nil
      length = redis.call('XLEN', keys.stream)
      loaded = true
    end
    -- The run's first event in the stream: its oldest is looked for from here.
    if not run_held then first, moved = id, true end
    run_bytes, run_held, bytes = run_bytes + size, true, bytes + size
    drop_run_oldest()
    trim()
    local tail = '}'
    if stop then tail = ',"stop":' .. stop .. '}' end
    redis.call(ANNOUNCE, channel, '{"id":"' .. id .. '","tenant":' .. tenant_json .. ',"event":' .. json .. tail)
    return id
  end

  -- Writes the counters the batch's events left.
  local function settle()
    if not loaded then return end
    if not run_held then
      redis.call('HDEL', keys.bytes, run_field, first_field)
      redis.call('HSET', keys.bytes, 'tenant', integer_text(bytes))
    elseif moved then
      redis.call('HSET', keys.bytes, run_field, integer_text(run_bytes), 'tenant', integer_text(bytes), first_field, first)
    else
      redis.call('HSET', keys.bytes, run_field, integer_text(run_bytes), 'tenant', integer_text(bytes))
    end
    loaded, moved = false, false
  end

  return { publish = publish, settle = settle }
end

--[[
  Publishes one event of `run` (an event_batch of one). keys: { stream, bytes, by_run };
  caps: { retain, bytes, run_bytes } (numbers or strings).
]]
local function publish_event(keys, caps, channel, tenant_json, run, json, stop)
  local events = event_batch(keys, caps, channel, tenant_json, run)
  local id = events.publish(json, stop)
  events.settle()
  return id
end
