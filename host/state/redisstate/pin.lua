-- Pins tool fingerprints (trust on first sight): records each name's
-- fingerprint unless one is recorded, and returns the recorded one of each.
-- KEYS[1]: the pins hash. ARGV: name1, fingerprint1, name2, fingerprint2, …
-- Returns the recorded fingerprints in the order of the names.
local out = {}
for i = 1, #ARGV, 2 do
  redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1])
  out[#out + 1] = redis.call('HGET', KEYS[1], ARGV[i])
end
return out
