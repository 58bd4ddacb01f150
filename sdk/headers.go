package sdk

import (
	"context"
	"encoding/json"
)

// Headers returns dynamic headers for a server; they override static ones.
// GetHeaders is called concurrently for many servers.
type Headers interface {
	GetHeaders(ctx context.Context, req *HeadersRequest) (*HeadersResponse, error)
}

// HeadersRequest names the server.
type HeadersRequest struct {
	ServerName string
	ServerURL  string
	// Config is the helper's configuration (a JSON object, e.g. its command).
	Config json.RawMessage
}

// HeadersResponse carries the headers, or diagnostics saying why there are none.
type HeadersResponse struct {
	Headers     map[string]string
	Diagnostics Diagnostics
}
