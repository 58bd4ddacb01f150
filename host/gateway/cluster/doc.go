// Package cluster is the gateway's replica protocol: what the replicas of
// one gateway (mcphost serve --http behind a load balancer, sharing a
// state { redis }) pass each other through the shared state.
//
// keys.go lists every key and channel the gateway uses in the shared state
// and every purpose of the keys derived from MCPHOST_SESSION_KEYS; seen.go
// is the replay guard of the sealed messages replicas publish. The
// messages themselves are written and read by their owners: the core of
// the gateway (held calls passed to the replica that holds them, logins
// shared between replicas) and the streamable-HTTP front (session records
// and changes, clients' answers passed to the replica that asked).
package cluster
