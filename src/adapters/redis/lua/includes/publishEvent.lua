--[[
  Appends a run event (its JSON) to the tenant's stream and announces it on the events
  channel as the StoredEvent JSON {"id", "tenant", "event"}, in one step: announcements then
  come in stream-id order, which the subscribers rely on to skip what a catch-up already
  delivered. `stop` (JSON, optional) rides on the announcement only, never in the stream: the
  run and its state as it stopped, for a replica waiting on it (StoredEvent.stop). Returns the stream id, which is the event id. ANNOUNCE is PUBLISH, or SPUBLISH on
  a cluster (the channel is then the tenant's, in the stream's slot).

  Retention (the same as the memory adapter's): the stream keeps the newest `caps.retain`
  events, at most `caps.bytes` bytes of event JSON and `caps.run_bytes` bytes of one run's
  events. Past the run's cap its own oldest events go (XDEL in the middle of the stream), past
  the tenant's byte cap the stream's oldest; past the count cap they go in a batch once the
  stream holds its slack more (retain / EVENT_COUNT_SLACK_DIVISOR, domain eventCountSlack):
  one XRANGE and one XTRIM for the batch, where one event each would cost both. Bytes are the JSON's length in bytes (UTF-8), Lua's `#`.
  The accounting lives beside the stream, in its slot:
    stream entry   e = the event JSON, r = its run id
    bytes hash     tenant = bytes of the stream, run:<run id> = bytes of that run's events
    by-run zset    one member per event, all of score 0, read lexically:
                   <run id> NUL <ms, 15 digits>-<seq, 10 digits> NUL <id> NUL <bytes>
  An entry without `r` (written before the byte caps) is counted by neither and dropped by count.

  A script that publishes several events of one run (stepRun) keeps their accounting in Lua
  (event_batch): it reads the counters and the stream's length once, drops past the caps as
  each event comes, as publishing them one by one would, and writes the counters and the new
  members back once at the end (settle). Two events then cost HMGET, XLEN, ZADD and HSET
  beside their XADDs and announcements, not ZADD, HINCRBY, HINCRBY and XLEN each; a drop by
  the run's cap costs its XDEL and ZREM, a batch dropped by the tenant's caps its XRANGE, XTRIM,
  one ZREM and an HINCRBY for each other run it held, the stream's length and the counters of
  the run and the tenant being counted in Lua. One event alone (publish_event) costs the same 4.
]]
--@include announce
--@include eventCaps

local function event_member(run, id, bytes)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return run .. '\0' .. string.rep('0', 15 - #ms) .. ms .. '-' .. string.rep('0', 10 - #seq) .. seq .. '\0' .. id .. '\0' .. bytes
end

-- Largest number of by-run members one ZADD or ZREM takes (unpack's limit is the Lua stack).
local EVENT_MEMBERS_BATCH = 500
-- Most of the stream's oldest entries read at once when trimming (a lowered cap trims in several).
local DROP_BATCH = 1000

-- A counter written back with HSET: an integer's digits, never Lua's "1e+15" or "197.0".
local function integer_text(n)
  return string.format('%d', n)
end

--[[
  Publishes events of `run` whose accounting is kept in Lua until settle(): each publish
  appends its event, drops what the caps no longer hold and announces it at once, so the
  stream, its announcements and what a cap drops are those of publish_event called for each
  event in turn; only the counters and the new events' by-run members wait for settle(), which
  writes them with one HSET and one ZADD. The script must call settle() before it returns once
  it has published (its events would stay uncounted, and be counted off when dropped), and
  write nothing else to these keys in between.

  keys: { stream, bytes, by_run }; caps: { retain, bytes, run_bytes } (numbers or strings);
  run: the events' run id.
]]
local function event_batch(keys, caps, channel, tenant_json, run)
  local run_cap, cap, retain = tonumber(caps.run_bytes), tonumber(caps.bytes), tonumber(caps.retain)
  local slack = math.floor(retain / EVENT_COUNT_SLACK_DIVISOR)
  local run_field = 'run:' .. run
  -- The counters as the hash would hold them had each event been counted: loaded by the first
  -- event after a settle. `run_held` mirrors whether the hash has the run's field (publish_event
  -- deletes it when the run's bytes drop to 0 or below).
  local loaded, run_bytes, run_held, bytes, length = false, 0, false, 0, 0
  -- This batch's events still retained and not yet in the by-run set, oldest first, at
  -- first..last: ids rise, so they are newer than any member of the run there, and a cap drops
  -- them from the front.
  local ids, sizes, first, last = {}, {}, 1, 0
  -- False once the by-run set has no member of the run left: its oldest is then the batch's.
  local stored = true

  -- Forgets a dropped event of the run in the counters.
  local function forget_own(size)
    run_bytes = run_bytes - size
    if run_bytes <= 0 then run_bytes, run_held = 0, false end
  end

  local function publish(json, stop)
    local id = redis.call('XADD', keys.stream, '*', 'e', json, 'r', run)
    local size = #json
    if loaded then
      length = length + 1
    else
      local counts = redis.call('HMGET', keys.bytes, run_field, 'tenant')
      run_bytes, run_held, bytes = tonumber(counts[1]) or 0, counts[1] ~= false, tonumber(counts[2]) or 0
      length = redis.call('XLEN', keys.stream)
      loaded = true
    end
    last = last + 1
    ids[last], sizes[last] = id, size
    run_bytes, run_held, bytes = run_bytes + size, true, bytes + size
    -- The run's oldest, while the run is over its cap: first those in the by-run set, then the batch's.
    while run_bytes > run_cap do
      local old_id, old_bytes
      if stored then
        local oldest = redis.call('ZRANGE', keys.by_run, '[' .. run .. '\0', '(' .. run .. '\1', 'BYLEX', 'LIMIT', 0, 1)[1]
        if oldest then
          old_id, old_bytes = string.match(oldest, '%z([^%z]+)%z(%d+)$')
          old_bytes = tonumber(old_bytes)
          redis.call('ZREM', keys.by_run, oldest)
        else
          stored = false
        end
      end
      if not old_id then
        if first > last then break end
        old_id, old_bytes = ids[first], sizes[first]
        first = first + 1
      end
      length = length - redis.call('XDEL', keys.stream, old_id)
      bytes = bytes - old_bytes
      forget_own(old_bytes)
    end
    -- The tenant's oldest: past the byte cap, or past the count cap and its slack, until both
    -- hold again; a batch at a time (one XRANGE, one XTRIM), its counters written once.
    if bytes > cap or length > retain + slack then
      while bytes > cap or length > retain do
        local oldest = redis.call('XRANGE', keys.stream, '-', '+', 'COUNT', integer_text(math.min(math.max(length - retain, 1), DROP_BATCH)))
        local dropped, members, others, other_bytes = 0, {}, {}, {}
        for _, entry in ipairs(oldest) do
          if bytes <= cap and length <= retain then break end
          dropped, length = dropped + 1, length - 1
          local old_id, fields = entry[1], entry[2]
          local old_json, old_run
          for i = 1, #fields, 2 do
            if fields[i] == 'e' then old_json = fields[i + 1] elseif fields[i] == 'r' then old_run = fields[i + 1] end
          end
          if old_run and old_json then
            local old_bytes = #old_json
            bytes = bytes - old_bytes
            if old_run ~= run then
              members[#members + 1] = event_member(old_run, old_id, old_bytes)
              if not other_bytes[old_run] then others[#others + 1], other_bytes[old_run] = old_run, 0 end
              other_bytes[old_run] = other_bytes[old_run] + old_bytes
            else
              if first <= last and ids[first] == old_id then
                first = first + 1
              else
                members[#members + 1] = event_member(run, old_id, old_bytes)
              end
              forget_own(old_bytes)
            end
          end
        end
        if dropped == 0 then break end
        -- The stream's oldest `dropped` entries are those just read: trimmed to what is left.
        redis.call('XTRIM', keys.stream, 'MAXLEN', '=', integer_text(length))
        for from = 1, #members, EVENT_MEMBERS_BATCH do
          redis.call('ZREM', keys.by_run, unpack(members, from, math.min(#members, from + EVENT_MEMBERS_BATCH - 1)))
        end
        for _, other in ipairs(others) do
          if redis.call('HINCRBY', keys.bytes, 'run:' .. other, integer_text(-other_bytes[other])) <= 0 then redis.call('HDEL', keys.bytes, 'run:' .. other) end
        end
      end
    end
    local tail = '}'
    if stop then tail = ',"stop":' .. stop .. '}' end
    redis.call(ANNOUNCE, channel, '{"id":"' .. id .. '","tenant":' .. tenant_json .. ',"event":' .. json .. tail)
    return id
  end

  -- Writes what the batch's events left: the counters, and the by-run members of those retained.
  local function settle()
    if not loaded then return end
    for from = first, last, EVENT_MEMBERS_BATCH do
      local members = {}
      for i = from, math.min(last, from + EVENT_MEMBERS_BATCH - 1) do
        members[#members + 1] = 0
        members[#members + 1] = event_member(run, ids[i], sizes[i])
      end
      redis.call('ZADD', keys.by_run, unpack(members))
    end
    if run_held then
      redis.call('HSET', keys.bytes, run_field, integer_text(run_bytes), 'tenant', integer_text(bytes))
    else
      redis.call('HDEL', keys.bytes, run_field)
      redis.call('HSET', keys.bytes, 'tenant', integer_text(bytes))
    end
    loaded, ids, sizes, first, last, stored = false, {}, {}, 1, 0, true
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
