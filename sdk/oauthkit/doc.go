// Package oauthkit holds the OAuth client pieces mcphost's built-in OAuth
// client and its auth plugins share, for what the go-sdk and x/oauth2 do not
// provide: an SSRF-guarded HTTP client for every OAuth fetch, MCP discovery
// of a server's authorization server (without requiring PKCE metadata for
// grants that have no authorization request), and token requests with any
// grant, RFC 8707 resource and the client authentication the server asks
// for, whose errors never quote a token.
package oauthkit

import "time"

// FlowTimeout bounds the wait for a user to finish a browser login; a
// flow's state is worthless after it.
const FlowTimeout = 10 * time.Minute
