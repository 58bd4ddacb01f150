package state

import (
	"context"
	"time"

	"github.com/mcphost/mcphost/host/auth"
)

// TokensChannel is the channel on which AnnouncedTokens publishes the key
// of each record it saves.
const TokensChannel = "tokens"

// announceTimeout bounds the publishing of a saved record's key.
const announceTimeout = 5 * time.Second

// AnnouncedTokens returns b's token store, which also publishes on
// TokensChannel the key of every record it saves: a login completed by one
// process (a replica of the gateway, `mcphost auth login`) wakes the
// connections of the others that wait for one. A failed publish is not the
// save's failure (the others find the record on their next connect).
func AnnouncedTokens(b Backend) auth.Store {
	a := announced{Store: b.Tokens(), b: b}
	if l, ok := a.Store.(auth.Leaser); ok {
		return announcedLeaser{a, l}
	}
	return a
}

type announced struct {
	auth.Store
	b Backend
}

func (a announced) Save(key string, r *auth.Record) error {
	if err := a.Store.Save(key, r); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), announceTimeout)
	defer cancel()
	_ = a.b.Publish(ctx, TokensChannel, []byte(key))
	return nil
}

type announcedLeaser struct {
	announced
	l auth.Leaser
}

func (a announcedLeaser) Lease(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	return a.l.Lease(ctx, key, ttl)
}
