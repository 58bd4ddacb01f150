// Package state is what the gateway's replicas share: OAuth tokens,
// refresh leases, pending request state, session facts, rate-limit
// counters and tool pins, behind one interface (Backend) with two
// implementations: Local, today's files and maps for one process, and the
// Redis backend (package state/redisstate) for several replicas, configured
// by the `state { backend = "redis" … }` block.
//
// Every key expires with what it holds (a TTL), except tool pins and
// tokens, which live until replaced or deleted. Nothing here is needed by a
// request that needs no shared state: the gateway asks the backend only
// for the facts it cannot have locally.
package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/ratelimit"
)

// ErrNotFound is returned by Get, Pop and Pins.Get when there is nothing
// under the key (or nothing arrived in time).
var ErrNotFound = errors.New("state: not found")

// ErrPinMissing is what a Pins.Pin error wraps (a *MissingPinsError) for
// names it cannot vouch for because the store's pins were tampered with: a
// shared store whose pins are older than those this process saw (deleted,
// or replaced by an older copy) or do not open with the configured keys.
// Such a tool is refused, not pinned afresh, until it is approved again.
var ErrPinMissing = errors.New("state: tool pin missing")

// MissingPinsError lists the names Pins.Pin could not vouch for; the
// fingerprints it returns with it are those of the other names.
type MissingPinsError struct {
	Names  []string // sorted
	Reason string   // why, for the operator
}

func (e *MissingPinsError) Error() string {
	return fmt.Sprintf("%s: %s (%s): approve the tool again with `mcphost tools approve`", ErrPinMissing, strings.Join(e.Names, ", "), e.Reason)
}

// Unwrap returns ErrPinMissing.
func (e *MissingPinsError) Unwrap() error { return ErrPinMissing }

// ErrHeld is returned by Lease when another holder has the lease (it is
// auth.ErrLeaseHeld, which token stores that are leasers return).
var ErrHeld = auth.ErrLeaseHeld

// Backend is the shared state. Its methods are safe for concurrent use.
// Keys are plain strings chosen by the caller ("sess:…", "refresh:…"); a
// backend may prefix them (state { key_prefix }).
type Backend interface {
	// Kind names the backend: "local" or "redis".
	Kind() string
	// Shared reports whether other processes share this state (false for
	// Local).
	Shared() bool

	// Tokens returns the OAuth token store. A shared backend's store keeps
	// every record sealed with the operator's key and also implements
	// auth.Leaser, so that one replica refreshes a credential at a time.
	Tokens() auth.Store

	// Lease takes the lease on key for ttl, or fails with ErrHeld while
	// another holder has it. release gives it back if it is still this
	// holder's (an expired lease taken by another is left alone); calling
	// it more than once is harmless.
	Lease(ctx context.Context, key string, ttl time.Duration) (release func(), err error)

	// Put stores value under key for ttl (> 0).
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// PutNew stores value under key for ttl only if nothing is stored there,
	// and reports whether it did.
	PutNew(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
	// Get returns the value under key, or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Delete removes key (no error when it is absent).
	Delete(ctx context.Context, key string) error

	// Publish sends msg to the subscribers of channel, in every process
	// sharing the state (this one included).
	Publish(ctx context.Context, channel string, msg []byte) error
	// Subscribe calls fn with each message published on channel from now on,
	// in order and never concurrently with itself, until cancel is called
	// (cancel returns once fn is no longer running). fn must not block: it
	// may run on the publisher's goroutine (Local) or on the one goroutine
	// that receives every channel's messages (a shared backend). A nil msg
	// means that messages may have been lost (the connection to a shared
	// backend was lost and made again): the subscriber forgets what it
	// caches.
	Subscribe(channel string, fn func(msg []byte)) (cancel func())

	// Push appends value to the list under key, which expires ttl after the
	// last push.
	Push(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Pop removes and returns the oldest value of the list under key,
	// waiting up to timeout for one; ErrNotFound when none came.
	Pop(ctx context.Context, key string, timeout time.Duration) ([]byte, error)

	// RateLimiter returns a limiter with o's limits whose counts are shared
	// by every process using the backend (name tells limiters apart).
	RateLimiter(name string, o ratelimit.Options) RateLimiter
	// Pins returns the tool pins.
	Pins() Pins

	// Ping checks that the backend is reachable (for /readyz).
	Ping(ctx context.Context) error
	// Close releases the backend's connections and goroutines.
	Close() error
}

// RateLimiter admits requests by key (a principal) within shared limits.
type RateLimiter interface {
	// Acquire admits one request of key, or refuses it with the reason and
	// the time until it would be admitted, as ratelimit.Limiter.Acquire
	// does. release must be called when an admitted request ends. An error
	// means the backend could not be asked: the caller decides (the
	// gateway admits the request and logs it, so that an outage of the
	// shared state does not stop every request).
	Acquire(ctx context.Context, key string) (release func(), retryAfter time.Duration, reason ratelimit.Reason, err error)
}

// Pins keeps the fingerprint of each tool definition first seen (trust on
// first sight) by registry name.
type Pins interface {
	// Pin records, for each name of fps with no recorded fingerprint, its
	// fingerprint in fps, and returns the recorded fingerprint of every
	// name of fps (fps's own where it was recorded now). A shared store
	// whose pins were tampered with fails with a *MissingPinsError
	// (ErrPinMissing) for the names it cannot vouch for, and returns the
	// recorded fingerprints of the others.
	Pin(ctx context.Context, fps map[string]string) (map[string]string, error)
	// Approve records fp for name, replacing any.
	Approve(ctx context.Context, name, fp string) error
	// Get returns the recorded fingerprint of name, or ErrNotFound.
	Get(ctx context.Context, name string) (string, error)
}
