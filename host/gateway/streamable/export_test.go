package streamable

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcphost/mcphost/host/gateway/wire"
)

// UsersVerifier verifies the bearer tokens that are one of users' names,
// each as that user (its UserID), valid for an hour.
func UsersVerifier(users ...string) auth.TokenVerifier {
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if !slices.Contains(users, token) {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
}

// parsed is body parsed as the HTTP handler parses a POST's message.
func parsed(t testing.TB, body []byte) *wire.Message {
	t.Helper()
	var m wire.Message
	if err := wire.Parse(&m, body); err != nil {
		t.Fatalf("parsing %s: %v", body, err)
	}
	return &m
}
