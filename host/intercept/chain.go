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
	// tools maps a tool's canonical name to the candidates of its calls,
	// other a planKey to those of another event's: copy on write, so a
	// lookup is one atomic load and one map read, lock- and
	// allocation-free (a string key hashes several times faster than a
	// struct of strings: tools/call is the hot path). The chain is replaced
	// on reload, so it never needs invalidation.
	tools atomic.Pointer[map[string]*candidates]
	other atomic.Pointer[map[planKey]*candidates]
	mu    sync.Mutex // serializes writers of tools and other
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
	server     string // the key's server (a tool's name implies it)
}

// NewChain returns the chain of entries, or nil for none.
func NewChain(entries []*Entry) *Chain {
	if len(entries) == 0 {
		return nil
	}
	c := &Chain{entries: slices.Clone(entries)}
	tools, other := map[string]*candidates{}, map[planKey]*candidates{}
	c.tools.Store(&tools)
	c.other.Store(&other)
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
	var cand *candidates
	if k.event == EventToolsCall {
		m := c.tools.Load()
		if m == nil { // a Chain not made by NewChain
			return nil
		}
		var ok bool
		if cand, ok = (*m)[k.name]; !ok || cand.server != k.server {
			cand = c.remember(k)
		}
	} else {
		m := c.other.Load()
		if m == nil {
			return nil
		}
		var ok bool
		if cand, ok = (*m)[k]; !ok {
			cand = c.remember(k)
		}
	}
	if cand.plan == nil || !cand.principals {
		return cand.plan
	}
	return cand.plan.forWho(whoOf(who))
}

// remember computes k's candidates and caches them while the cache has
// room. (A tool name seen with another server than the cached one, which
// a registry never does, is computed each time.)
func (c *Chain) remember(k planKey) *candidates {
	cand := c.candidates(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if k.event == EventToolsCall {
		c.tools.Store(storeCopy(c.tools.Load(), k.name, cand))
	} else {
		c.other.Store(storeCopy(c.other.Load(), k, cand))
	}
	return cand
}

// storeCopy returns a copy of *m with k set to v, or m itself when k is
// there already or the map is full.
func storeCopy[K comparable](m *map[K]*candidates, k K, v *candidates) *map[K]*candidates {
	if _, ok := (*m)[k]; ok || len(*m) >= maxCached {
		return m
	}
	n := make(map[K]*candidates, len(*m)+1)
	for key, val := range *m {
		n[key] = val
	}
	n[k] = v
	return &n
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
		return &candidates{server: k.server}
	}
	return &candidates{plan: newPlan(k.event, es), principals: principals, server: k.server}
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
