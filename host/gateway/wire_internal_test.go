package gateway

import (
	"testing"

	"github.com/mcphost/mcphost/host/gateway/wire"
)

// parsed is body parsed as the HTTP handler parses a POST's message.
func parsed(t testing.TB, body []byte) *wire.Message {
	t.Helper()
	var m wire.Message
	if err := wire.Parse(&m, body); err != nil {
		t.Fatalf("parsing %s: %v", body, err)
	}
	return &m
}
