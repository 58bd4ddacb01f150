package redisstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcphost/mcphost/host/auth"
)

// tokenStore keeps OAuth token records under PREFIX tok:<key>, each the
// JSON of an auth.Record sealed with the backend's TokenBox, bound to its
// full Redis key (a record moved to another key does not open). It is an
// auth.Leaser too: the lease of key is the backend's lease "refresh:"+key.
type tokenStore struct{ b *Backend }

var (
	_ auth.Store  = tokenStore{}
	_ auth.Leaser = tokenStore{}
)

// Load reads and opens key's record, or returns auth.ErrNotFound.
func (s tokenStore) Load(key string) (*auth.Record, error) {
	k := s.b.key("tok:", key)
	ctx, cancel := s.b.opContext()
	defer cancel()
	sealed, err := s.b.rdb.Get(ctx, k).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, auth.ErrNotFound
	}
	if err != nil {
		return nil, wrap(ctx, "loading credentials", err)
	}
	plain, err := s.b.box.Open(nil, sealed, []byte(k))
	if err != nil {
		return nil, fmt.Errorf("the stored credentials of %s cannot be decrypted with the configured keys (%s): restore the key that sealed them, or log in again", key, "MCPHOST_SESSION_KEYS")
	}
	var r auth.Record
	if err := json.Unmarshal(plain, &r); err != nil {
		return nil, fmt.Errorf("the stored credentials of %s are damaged; log in again", key) // never quote them
	}
	return &r, nil
}

// Save seals and writes key's record (no TTL: it lives until replaced or
// deleted).
func (s tokenStore) Save(key string, r *auth.Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	k := s.b.key("tok:", key)
	ctx, cancel := s.b.opContext()
	defer cancel()
	if err := s.b.rdb.Set(ctx, k, s.b.box.Seal(nil, b, []byte(k)), 0).Err(); err != nil {
		return wrap(ctx, "saving credentials", err)
	}
	return nil
}

// Delete removes key's record; a missing one is not an error.
func (s tokenStore) Delete(key string) error {
	ctx, cancel := s.b.opContext()
	defer cancel()
	if err := s.b.rdb.Del(ctx, s.b.key("tok:", key)).Err(); err != nil {
		return wrap(ctx, "deleting credentials", err)
	}
	return nil
}

// Lease takes the refresh lease of key's credentials.
func (s tokenStore) Lease(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	return s.b.Lease(ctx, "refresh:"+key, ttl)
}
