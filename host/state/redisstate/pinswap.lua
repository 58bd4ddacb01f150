-- Replaces the sealed tool pins if they are still what the writer read.
-- KEYS[1]: the pins; KEYS[2]: the pins of the former format (an unsealed
-- hash), deleted with the write, so that nothing reads them after the
-- first sealed set. ARGV[1]: the value read ("" when there was none);
-- ARGV[2]: the new value. Returns 1 if it replaced them, 0 if another
-- writer came first.
local cur = redis.call('GET', KEYS[1])
if (cur == false and ARGV[1] == '') or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  redis.call('DEL', KEYS[2])
  return 1
end
return 0
