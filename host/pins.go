package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/host/state"
)

// ErrToolChanged is returned for a call to a tool whose definition changed
// since it was first seen (a "rug pull"): it stays blocked until approved.
var ErrToolChanged = errors.New("tool definition changed")

// ErrPinsUnavailable is returned for a call to a tool whose definition
// cannot be checked against its pin (the shared state is unreachable): it
// is refused rather than called unchecked.
var ErrPinsUnavailable = errors.New("tool pins unavailable")

// pinsTimeout bounds one request to the pin store.
const pinsTimeout = 5 * time.Second

// pins remembers the fingerprint of every tool definition the host has seen
// (trust on first sight) in a pin store (a file, or the state replicas
// share). A later, different definition of the same tool blocks it until
// `mcphost tools approve` records the new one. The fingerprints known to
// match are cached: a call to a tool whose definition matches its pin asks
// the store nothing.
type pins struct {
	store state.Pins

	mu       sync.Mutex
	seen     map[string]string // registry name -> recorded fingerprint, as last read
	reported string            // the reason last logged for pins that could not be checked
}

func newPins(store state.Pins) *pins {
	return &pins{store: store, seen: map[string]string{}}
}

// observe pins the tools it has not seen and reports which ones are
// blocked, and why: an error wrapping ErrToolChanged for a definition that
// changed, or ErrPinsUnavailable for one that could not be checked (a store
// that cannot be reached, or that cannot vouch for the pin: a
// *state.MissingPinsError) and is blocked as not known to match.
func (p *pins) observe(tools []*registry.Tool) map[string]error {
	p.mu.Lock()
	ask := map[string]string{}
	for _, t := range tools {
		if p.seen[t.Name] != t.Fingerprint {
			ask[t.Name] = t.Fingerprint
		}
	}
	p.mu.Unlock()
	blocked := map[string]error{}
	if len(ask) == 0 {
		return blocked
	}
	ctx, cancel := context.WithTimeout(context.Background(), pinsTimeout)
	defer cancel()
	recorded, err := p.store.Pin(ctx, ask)
	// A store that cannot vouch for some names (state.ErrPinMissing) has
	// recorded the others.
	failed := err != nil && !errors.Is(err, state.ErrPinMissing)
	if !failed {
		for _, t := range tools {
			if fp, asked := ask[t.Name]; asked && t.Fingerprint == fp {
				if cur, ok := recorded[t.Name]; ok {
					recorded[t.Name] = p.upgrade(ctx, t, cur)
				}
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, fp := range ask {
		switch cur, ok := recorded[name]; {
		case failed || !ok:
			blocked[name] = fmt.Errorf("%w: %w", ErrPinsUnavailable, err)
		default:
			p.seen[name] = cur
			if cur != fp {
				blocked[name] = ErrToolChanged
			}
		}
	}
	return blocked
}

// newReport reports whether reason differs from the one last reported (so
// that a reason is logged once, not at every tool list).
func (p *pins) newReport(reason string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if reason == p.reported {
		return false
	}
	p.reported = reason
	return true
}

// check fails for a tool whose definition differs from its pin (pinning it
// if it was never seen).
func (p *pins) check(t *registry.Tool) error {
	p.mu.Lock()
	ok := p.seen[t.Name] == t.Fingerprint
	p.mu.Unlock()
	if ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), pinsTimeout)
	defer cancel()
	recorded, err := p.store.Pin(ctx, map[string]string{t.Name: t.Fingerprint})
	if err != nil {
		return fmt.Errorf("%w: checking %s against its pin: %w", ErrPinsUnavailable, t.Name, err)
	}
	cur := p.upgrade(ctx, t, recorded[t.Name])
	p.mu.Lock()
	p.seen[t.Name] = cur
	p.mu.Unlock()
	if cur != t.Fingerprint {
		return fmt.Errorf("%w: %s is not what it was when first seen (its description, schemas, annotations, icons, _meta or execution changed); review it with `mcphost tools --server %s` and approve it with `mcphost tools approve %s`",
			ErrToolChanged, t.Name, t.Server, t.Name)
	}
	return nil
}

// upgrade returns the pin recorded for t, cur, or — when cur is t's
// fingerprint as earlier versions computed it (registry.Tool.
// PriorFingerprint: they did not cover the output schema, icons, _meta or
// execution) — t's fingerprint, recorded in its stead: a pin made before
// stays valid for the definition it was made of.
func (p *pins) upgrade(ctx context.Context, t *registry.Tool, cur string) string {
	if cur == t.Fingerprint || t.PriorFingerprint == "" || cur != t.PriorFingerprint {
		return cur
	}
	if err := p.store.Approve(ctx, t.Name, t.Fingerprint); err != nil {
		return cur // (checked again at the next sight)
	}
	return t.Fingerprint
}

// approve records a tool's current definition.
func (p *pins) approve(t *registry.Tool) error {
	ctx, cancel := context.WithTimeout(context.Background(), pinsTimeout)
	defer cancel()
	if err := p.store.Approve(ctx, t.Name, t.Fingerprint); err != nil {
		return fmt.Errorf("approving %s: %w", t.Name, err)
	}
	p.mu.Lock()
	p.seen[t.Name] = t.Fingerprint
	p.mu.Unlock()
	return nil
}
