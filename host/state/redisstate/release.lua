-- Gives a lease back: deletes the lease's key only if it still holds this
-- holder's token (an expired lease taken by another is left alone).
-- KEYS[1]: the lease. ARGV[1]: the holder's token.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
