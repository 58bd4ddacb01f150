package redisstate

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts, sent once per server (EVALSHA, EVAL when the server
// does not know them, as after a restart).
var (
	//go:embed release.lua
	releaseLua    string
	releaseScript = redis.NewScript(releaseLua)

	//go:embed pinswap.lua
	pinSwapLua    string
	pinSwapScript = redis.NewScript(pinSwapLua)

	//go:embed ratelimit.lua
	rateLimitLua    string
	rateLimitScript = redis.NewScript(rateLimitLua)

	//go:embed ratelimit_release.lua
	rateReleaseLua    string
	rateReleaseScript = redis.NewScript(rateReleaseLua)
)
