package intercept

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/permissions"
)

// maxCached bounds the plan cache: the names of tools are bounded by the
// registry, but a resources/read URI comes from the client, so past this
// many keys plans are computed per call (a loop over the entries) instead
// of being remembered.
const maxCached = 4096

// Chain is every configured check, in declared order. It is immutable; a
// reload builds a new one. A nil *Chain has no checks.
type Chain struct {
	entries []*Entry
	// cache maps a planKey to the candidates of that call: copy on write,
	// so a lookup is one atomic load and one map read, lock- and
	// allocation-free. The chain is replaced on reload, so it never needs
	// invalidation.
	cache atomic.Pointer[map[planKey]*candidates]
	mu    sync.Mutex // serializes writers of cache
}

// planKey identifies the calls that have the same candidates: the event,
// the server and the item's name (a tool's canonical name, a prompt's
// name, a resource's URI; the server's name again for elicitations).
type planKey struct {
	event, server, name string
}

// candidates is the entries that match a key whatever the principal, as
// a ready plan; principals says some of them also filter by principal.
type candidates struct {
	plan       *Plan // nil: nothing matches
	principals bool
}

// NewChain returns the chain of entries, or nil for none.
func NewChain(entries []*Entry) *Chain {
	if len(entries) == 0 {
		return nil
	}
	c := &Chain{entries: slices.Clone(entries)}
	m := map[planKey]*candidates{}
	c.cache.Store(&m)
	return c
}

// Entries returns the chain's entries in declared order.
func (c *Chain) Entries() []*Entry {
	if c == nil {
		return nil
	}
	return slices.Clone(c.entries)
}

// ForTool returns the plan of a tools/call of the canonical name on
// server by who, or nil when nothing matches.
func (c *Chain) ForTool(name, server string, who *inbound.Principal) *Plan {
	if c == nil {
		return nil
	}
	return c.plan(planKey{EventToolsCall, server, name}, who)
}

// ForEvent returns the plan of event (prompts/get, resources/read, the list
// methods) for the item name on server, or nil when nothing matches. name
// is "" for a list; an entry's match.tools patterns then do not apply.
func (c *Chain) ForEvent(event, server, name string, who *inbound.Principal) *Plan {
	if c == nil {
		return nil
	}
	return c.plan(planKey{event, server, name}, who)
}

// ForElicit returns the plan of the Elicitation hooks for an elicitation
// from server, or nil when nothing matches.
func (c *Chain) ForElicit(server string, who *inbound.Principal) *Plan {
	if c == nil {
		return nil
	}
	return c.plan(planKey{EventElicit, server, server}, who)
}

// plan returns k's plan for who: the cached candidates, filtered by
// principal only when one of them has a principals condition.
func (c *Chain) plan(k planKey, who *inbound.Principal) *Plan {
	m := c.cache.Load()
	if m == nil { // a Chain not made by NewChain
		return nil
	}
	cand, ok := (*m)[k]
	if !ok {
		cand = c.remember(k)
	}
	if cand.plan == nil || !cand.principals {
		return cand.plan
	}
	return cand.plan.forWho(whoOf(who))
}

// remember computes k's candidates and caches them while the cache has
// room.
func (c *Chain) remember(k planKey) *candidates {
	cand := c.candidates(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[planKey]*candidates
	if m := c.cache.Load(); m != nil {
		old = *m
	}
	if prev, ok := old[k]; ok {
		return prev
	}
	if len(old) >= maxCached {
		return cand
	}
	m := make(map[planKey]*candidates, len(old)+1)
	for key, v := range old {
		m[key] = v
	}
	m[k] = cand
	c.cache.Store(&m)
	return cand
}

// candidates returns the entries that match k whatever the principal.
func (c *Chain) candidates(k planKey) *candidates {
	var es []*Entry
	principals := false
	for _, e := range c.entries {
		if !e.matches(k) {
			continue
		}
		es = append(es, e)
		if e.Match.Principals != nil {
			principals = true
		}
	}
	if len(es) == 0 {
		return &candidates{}
	}
	return &candidates{plan: newPlan(k.event, es), principals: principals}
}

// matches reports whether e checks k's calls, leaving out principals.
func (e *Entry) matches(k planKey) bool {
	if !slices.Contains(e.Events, k.event) {
		return false
	}
	m := &e.Match
	if m.Matcher != nil && !m.Matcher(k.name) {
		return false
	}
	if len(m.Servers) > 0 && !slices.Contains(m.Servers, k.server) {
		return false
	}
	if len(m.Tools) > 0 && k.name != "" && k.event != EventElicit {
		hit := false
		for _, p := range m.Tools {
			if permissions.Match(p, k.name) {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

// whoOf is the permission subject of a principal (nil for nil), as
// host.Who: this package cannot import host.
func whoOf(p *inbound.Principal) *permissions.Who {
	if p == nil {
		return nil
	}
	return &permissions.Who{Subject: p.Subject, Groups: p.Groups}
}
