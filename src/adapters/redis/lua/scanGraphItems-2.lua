--[[
  Reads one page of a tenant's LangGraph memory items under a namespace prefix: namespaces in
  lexical order, each one's items by place (the order they were put in). Every namespace in the
  zset holds an item, so a page visits at most `limit` namespaces past the cursor's. The order
  zsets are built from ARGV[1] (the tenant's hash tag is in it: one slot).

  KEYS[1] items hash   KEYS[2] namespaces zset
  ARGV[1] item order key prefix (+ namespace name = that namespace's order zset)
  ARGV[2] ZRANGEBYLEX min of the prefix's namespaces   ARGV[3] their max
  ARGV[4] the cursor's namespace name ('' from the start)   ARGV[5] the cursor's place
  ARGV[6] limit

  Returns {0, then per item read: namespace name, key, place, record}
]]
local out = {0}
local left = tonumber(ARGV[6])

local function take(ns, minPlace)
  local placed = redis.call('ZRANGEBYSCORE', ARGV[1] .. ns, minPlace, '+inf', 'WITHSCORES', 'LIMIT', 0, left)
  for i = 1, #placed, 2 do
    local record = redis.call('HGET', KEYS[1], ns .. '\0' .. placed[i])
    if record then
      out[#out + 1] = ns
      out[#out + 1] = placed[i]
      out[#out + 1] = placed[i + 1]
      out[#out + 1] = record
      left = left - 1
    end
  end
end

local from = ARGV[2]
if ARGV[4] ~= '' then
  take(ARGV[4], '(' .. ARGV[5])
  from = '(' .. ARGV[4]
end
while left > 0 do
  local names = redis.call('ZRANGEBYLEX', KEYS[2], from, ARGV[3], 'LIMIT', 0, left)
  if #names == 0 then break end
  for _, ns in ipairs(names) do
    take(ns, '-inf')
    if left == 0 then break end
  end
  from = '(' .. names[#names]
end
return out
