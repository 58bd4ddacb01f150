-- Releases a request admitted by ratelimit.lua, and sets the key to expire
-- with its longest-lived remaining member (at once when none remains).
-- KEYS[1]: the key's ZSET. ARGV[1]: the request's id.
redis.call('ZREM', KEYS[1], ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local ms = math.ceil((tonumber(last[2]) - now) / 1000) + 1
  if ms < 1 then
    ms = 1
  end
  redis.call('PEXPIRE', KEYS[1], ms)
end
return 0
