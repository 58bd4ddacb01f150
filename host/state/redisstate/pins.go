package redisstate

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/mcphost/mcphost/host/state"
)

// pins are the tool pins in the HASH PREFIX pins (registry name →
// fingerprint), without TTL.
type pins struct{ b *Backend }

var _ state.Pins = pins{}

// Pins returns the tool pins.
func (b *Backend) Pins() state.Pins { return pins{b} }

// Pin records the fingerprints of the names not yet pinned and returns the
// recorded fingerprint of each, in one round trip (a script: HSETNX and
// HGET for each name).
func (p pins) Pin(ctx context.Context, fps map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(fps))
	if len(fps) == 0 {
		return out, nil
	}
	names := make([]string, 0, len(fps))
	args := make([]any, 0, 2*len(fps))
	for name, fp := range fps {
		names = append(names, name)
		args = append(args, name, fp)
	}
	got, err := pinScript.Run(ctx, p.b.rdb, []string{p.key()}, args...).StringSlice()
	if err != nil {
		return nil, wrap(ctx, "pinning tools", err)
	}
	if len(got) != len(names) {
		return nil, wrap(ctx, "pinning tools", fmt.Errorf("%d fingerprints for %d names", len(got), len(names)))
	}
	for i, name := range names {
		out[name] = got[i]
	}
	return out, nil
}

// Approve records fp for name, replacing any.
func (p pins) Approve(ctx context.Context, name, fp string) error {
	if err := p.b.rdb.HSet(ctx, p.key(), name, fp).Err(); err != nil {
		return wrap(ctx, "approving a tool", err)
	}
	return nil
}

// Get returns name's recorded fingerprint, or state.ErrNotFound.
func (p pins) Get(ctx context.Context, name string) (string, error) {
	fp, err := p.b.rdb.HGet(ctx, p.key(), name).Result()
	if errors.Is(err, redis.Nil) {
		return "", state.ErrNotFound
	}
	if err != nil {
		return "", wrap(ctx, "reading a tool pin", err)
	}
	return fp, nil
}

func (p pins) key() string { return p.b.prefix + "pins" }
