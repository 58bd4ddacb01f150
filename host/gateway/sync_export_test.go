package gateway

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// WithSyncTrace returns ctx whose Sync (Gateway.Sync(ctx)) calls f at its
// points: "wait" when it must wait for another Sync to end, "read" once it
// has read the registry's tools.
func WithSyncTrace(ctx context.Context, f func(point string)) context.Context {
	return context.WithValue(ctx, syncTraceKey{}, f)
}

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

// NamingMode is the naming mode g serves (namingMode).
func (g *Gateway) NamingMode() string { return g.namingMode() }
