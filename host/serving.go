package host

// Serving is what a Host offers a gateway that serves it to MCP clients
// (mcphost serve, package host/gateway) beyond the library: the relay's fast
// path for tools/call (RelayCall, RelayStart), the permission decisions
// for a gateway's users (DecideFor, Decision: a call's one, ServerDeniedFor, HasPrincipalRules,
// ToolVisible), per-user servers (PerUser), the protocol version of an
// upstream session (ProtocolVersion), and the logins of replicas sharing
// a token store (CredentialsStored, LoggedInElsewhere). A Go program using
// the Host as a library needs none of it. Its methods are safe for
// concurrent use.
type Serving struct{ h *Host }

// Serving returns the Host's gateway view. It allocates nothing.
func (h *Host) Serving() *Serving { return &h.serving }
