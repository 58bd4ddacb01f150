package sdk

import (
	"context"
	"encoding/json"
	"fmt"
)

// Transport opens connections to MCP servers. One plugin process serves every
// server that uses it, so Open is called concurrently for many servers.
type Transport interface {
	// Open connects to the server described by req. The connection outlives
	// ctx, which bounds only the opening. A *TransportError tells the host how
	// to classify a failure (auth, terminal, other).
	Open(ctx context.Context, req *OpenRequest) (Conn, error)
}

// Conn is one open connection, carrying one JSON-RPC message per Send or Recv
// as opaque bytes: a transport forwards messages, it does not decode them.
//
// Send may be called concurrently with Recv, and Close concurrently with both:
// Close unblocks a pending Recv. Send is not called concurrently with itself.
type Conn interface {
	// Recv returns the next message from the server. It returns io.EOF when
	// the server ends the connection cleanly, or a *TransportError.
	Recv(ctx context.Context) ([]byte, error)
	// Send sends one message to the server.
	Send(ctx context.Context, msg []byte) error
	// Close closes the connection.
	Close() error
}

// OpenRequest describes the server to connect to.
type OpenRequest struct {
	// Transport is the transport name from the server's configuration.
	Transport  string
	ServerName string
	URL        string
	// Headers are resolved: static headers with dynamic ones applied.
	Headers map[string]string
	// TLS holds TLS options; nil means defaults.
	TLS *TLSConfig
	// ProxyURL is an HTTP(S) proxy to connect through; empty means direct.
	ProxyURL string
	// Config is the transport's own configuration (a JSON object), if any.
	Config json.RawMessage
}

// TLSConfig holds the TLS options of a connection.
type TLSConfig struct {
	// CAPEM holds extra root certificates; empty means the system roots.
	CAPEM []byte
	// ClientCertPEM and ClientKeyPEM are a client certificate for mutual TLS.
	ClientCertPEM, ClientKeyPEM []byte
	ServerName                  string
	InsecureSkipVerify          bool
}

// ErrorCode classifies a transport failure.
type ErrorCode int

// Error codes.
const (
	// CodeOther is a failure that is neither of the below.
	CodeOther ErrorCode = iota + 1
	// CodeTerminal means the connection is gone (reset, refused, timed out, closed).
	CodeTerminal
	// CodeAuth means the server refused the credentials (HTTP 401 or 403).
	CodeAuth
)

// TransportError is a classified transport failure.
type TransportError struct {
	Code            ErrorCode
	Message         string
	HTTPStatus      int
	WWWAuthenticate string
}

func (e *TransportError) Error() string {
	kind := map[ErrorCode]string{CodeTerminal: "connection failed", CodeAuth: "not authorized"}[e.Code]
	if kind == "" {
		kind = "transport error"
	}
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", kind, e.HTTPStatus, e.Message)
	}
	return kind + ": " + e.Message
}
