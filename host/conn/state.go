// Package conn manages connections to MCP servers: one go-sdk client session per
// configured server over stdio, SSE or streamable HTTP, with connection states,
// bounded connect concurrency, timeouts, reconnection with backoff, and clean
// shutdown of stdio server processes.
package conn

import "encoding/json"

// State is a server connection's state.
type State int

// Connection states. A server starts pending (or disabled); connecting moves it
// to connected, failed or needs-auth; a dropped connection goes back to pending
// and is re-established on next use.
const (
	StatePending State = iota
	StateConnected
	StateFailed
	StateNeedsAuth
	StateDisabled
)

var stateNames = [...]string{"pending", "connected", "failed", "needs-auth", "disabled"}

// String returns the state's name as shown by `mcphost servers`.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// MarshalJSON encodes the state as its name.
func (s State) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }
