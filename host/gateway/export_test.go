package gateway

import (
	"maps"
	"slices"
)

// ServedPrompts are the names of the prompts served to all at this moment
// (for the tests that must see what a Sync left, without a session).
func (g *Gateway) ServedPrompts() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Sorted(maps.Keys(g.exposed.prompts))
}
