-- Admits one request of a key, or says why not: the concurrency limit,
-- then GCRA (a token bucket kept as its "theoretical arrival time"), with
-- the server's clock, atomically.
--
-- KEYS[1]: the key's ZSET. Its member "t" is the GCRA arrival time; every
-- other member is a request in flight, scored by when it stops counting
-- if its release never comes (a replica that died mid-request). Every
-- score is a time in microseconds after which the member means nothing:
-- an arrival time in the past is a full bucket.
--
-- ARGV[1]: the emission interval in microseconds (1/rate), 0 for no rate
-- ARGV[2]: the burst (the bucket's size)
-- ARGV[3]: the most requests in flight, 0 for no limit
-- ARGV[4]: the request's id (with a concurrency limit)
-- ARGV[5]: how long an unreleased request counts, in microseconds
--
-- Returns {0, 0} when admitted, {1, retry} when the rate is exceeded, retry
-- being the microseconds until a token is available, {2, 0} when too many
-- requests are in flight.
local key = KEYS[1]
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local maxInFlight = tonumber(ARGV[3])
local expiry = tonumber(ARGV[5])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

redis.call('ZREMRANGEBYSCORE', key, '-inf', now)

-- Concurrency first: a request refused for it costs no token.
if maxInFlight > 0 then
  local n = redis.call('ZCARD', key)
  if redis.call('ZSCORE', key, 't') then
    n = n - 1
  end
  if n >= maxInFlight then
    return {2, 0}
  end
end

if interval > 0 then
  local tat = tonumber(redis.call('ZSCORE', key, 't') or now)
  if tat < now then
    tat = now
  end
  local newTat = tat + interval
  local allowAt = newTat - interval * burst
  if now < allowAt then
    return {1, math.ceil(allowAt - now)}
  end
  redis.call('ZADD', key, newTat, 't')
end

if maxInFlight > 0 then
  redis.call('ZADD', key, now + expiry, ARGV[4])
end

-- The key lives as long as its longest-lived member.
local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
if last[2] then
  redis.call('PEXPIRE', key, math.ceil((tonumber(last[2]) - now) / 1000) + 1)
end
return {0, 0}
