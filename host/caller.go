package host

import (
	"context"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/permissions"
)

// Caller is whom a call is made for: an authenticated user of the gateway
// (serve --http with gateway { oauth }) and the token it presented.
type Caller struct {
	// Principal is the user, as its token says.
	Principal *inbound.Principal
	// token is the inbound access token: exchanged for a server's own token
	// (oauth { grant = "token_exchange" }), never sent to a server as it
	// is, never logged.
	token string
	// user is the principal as the connections know it (conn.WithUser):
	// per-user servers are reached through its own connections.
	user *conn.User
}

type callerKey struct{}

// WithCaller returns ctx carrying the principal a gateway request was
// authenticated as, and its inbound token. Permission rules limited to
// principals (for_principals), per-user server credentials and the audit
// log use it.
func WithCaller(ctx context.Context, p *inbound.Principal, token string) context.Context {
	if p == nil {
		return ctx
	}
	u := &conn.User{Issuer: p.Issuer, Subject: p.Subject, Groups: p.Groups, Token: token}
	return conn.WithUser(context.WithValue(ctx, callerKey{}, &Caller{Principal: p, token: token, user: u}), u)
}

// WithCallerOf returns ctx carrying c (from CallerOf): for work done for a
// request after it was answered.
func WithCallerOf(ctx context.Context, c *Caller) context.Context {
	if c == nil {
		return ctx
	}
	return conn.WithUser(context.WithValue(ctx, callerKey{}, c), c.user)
}

// WithoutCaller returns ctx carrying no caller: for the host's own work
// done while serving a caller (the lists shared by all), which must not
// use the caller's rules or per-user connections.
func WithoutCaller(ctx context.Context) context.Context {
	if CallerOf(ctx) == nil {
		return conn.WithoutUser(ctx)
	}
	return conn.WithoutUser(context.WithValue(ctx, callerKey{}, (*Caller)(nil)))
}

// CallerOf returns the caller ctx carries, or nil (the host's own user).
func CallerOf(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}

// Who returns the permission subject of a principal (nil for nil).
func Who(p *inbound.Principal) *permissions.Who {
	if p == nil {
		return nil
	}
	return &permissions.Who{Subject: p.Subject, Groups: p.Groups}
}

// whoOf returns the permission subject of ctx's caller, or nil.
func whoOf(ctx context.Context) *permissions.Who {
	if c := CallerOf(ctx); c != nil {
		return Who(c.Principal)
	}
	return nil
}

// DecideFor returns the permission decision for the registry tool name and
// principal p (nil: nobody in particular, as Decide).
func (s *Serving) DecideFor(p *inbound.Principal, name string) permissions.Decision {
	return s.h.policy.Load().DecideFor(name, Who(p))
}

// ServerDeniedFor reports whether everything of server is denied to p (see
// permissions.Policy.ServerDenied): its resources are neither listed nor
// read for p.
func (s *Serving) ServerDeniedFor(p *inbound.Principal, server string) bool {
	return s.h.policy.Load().ServerDenied(server, Who(p))
}

// HasPrincipalRules reports whether some permission rules apply to some
// principals only (for_principals).
func (s *Serving) HasPrincipalRules() bool { return s.h.policy.Load().Scoped() }
