package cli

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/ratelimit"
	"github.com/mcphost/mcphost/host/state"
)

// gatewayOptions sets the HTTP options a gateway block configures: inbound
// OAuth (the static token is then not used) and rate limits (counted in
// st, shared by the replicas).
func gatewayOptions(cfg *config.Config, st state.Backend, opts *streamable.Options) error {
	gw := cfg.Gateway
	if gw == nil {
		return nil
	}
	if o := gw.OAuth; o != nil {
		v, err := inbound.New(inbound.Options{
			Issuer:           o.Issuer,
			Audience:         o.Audience,
			GroupsClaim:      o.GroupsClaim,
			JWKSURL:          o.JWKSURL,
			IntrospectionURL: o.IntrospectionURL,
			ClientID:         o.ClientID,
			ClientSecret:     o.ClientSecret,
			AllowLoopback:    o.AllowLoopback,
			AcceptTypes:      o.AcceptJWTTypes,
		})
		if err != nil {
			return fmt.Errorf("gateway oauth (%s): %w", gw.Origin.Source(), err)
		}
		opts.OAuth = &streamable.InboundOAuth{Verify: v.Verify, Resource: gw.URL, AuthorizationServers: []string{o.Issuer}, Scopes: o.Scopes}
		opts.Token = ""
	}
	if r := gw.RateLimit; r != nil {
		var lo ratelimit.Options
		if r.PerPrincipal != "" {
			rate, err := ratelimit.ParseRate(r.PerPrincipal)
			if err != nil {
				return fmt.Errorf("gateway rate_limit (%s): %w", gw.Origin.Source(), err)
			}
			lo.Rate, lo.Burst = rate, r.Burst // (0: ratelimit's default, a second's worth)
		}
		lo.MaxConcurrent = r.MaxConcurrent
		opts.RateLimit = st.RateLimiter("gateway", lo)
	}
	return nil
}

// mountGateway mounts, beside /mcp, what the gateway block adds: the
// protected resource metadata; or, with the static token, answers to OAuth
// discovery that say to send the token (streamable.NoOAuthHandler).
func mountGateway(mux *http.ServeMux, opts *streamable.Options) {
	if opts.OAuth == nil {
		if opts.Token != "" {
			// A client that looks for OAuth after a 401 is told to send
			// the static token instead.
			h := streamable.NoOAuthHandler()
			for _, p := range streamable.NoOAuthPaths() {
				mux.Handle(p, h)
			}
		}
		return
	}
	h := streamable.GuardHost(opts.OAuth.MetadataHandler())
	for _, p := range opts.OAuth.MetadataPaths() {
		mux.Handle(p, h)
	}
}

// describeGateway says how clients authenticate, for the start banner.
func describeGateway(cfg *config.Config, opts *streamable.Options) string {
	var b strings.Builder
	if o := opts.OAuth; o != nil {
		fmt.Fprintf(&b, "Clients authenticate with OAuth: access tokens of %s for %s", cfg.Gateway.OAuth.Issuer, strings.Join(cfg.Gateway.OAuth.Audience, ", "))
		if len(o.Scopes) > 0 {
			fmt.Fprintf(&b, " with scope %s", strings.Join(o.Scopes, " "))
		}
		fmt.Fprintf(&b, ".\nProtected resource metadata: %s\n", o.MetadataURL())
	}
	if r := cfg.Gateway.RateLimit; opts.RateLimit != nil && r != nil {
		var parts []string
		if r.PerPrincipal != "" {
			burst := r.Burst
			if rate, err := ratelimit.ParseRate(r.PerPrincipal); err == nil {
				burst = ratelimit.New(ratelimit.Options{Rate: rate, Burst: r.Burst}).Burst() // (its default)
			}
			parts = append(parts, fmt.Sprintf("%s, burst %d", r.PerPrincipal, burst))
		}
		if r.MaxConcurrent > 0 {
			parts = append(parts, fmt.Sprintf("at most %d concurrent", r.MaxConcurrent))
		}
		fmt.Fprintf(&b, "Rate limit per principal: %s.\n", strings.Join(parts, "; "))
	}
	return b.String()
}

// openAudit opens the audit log of an audit block (nil without one), and
// returns its closing, which flushes what is queued and reports losses.
func openAudit(cfg *config.Config, log hclog.Logger) (*audit.Log, func(), error) {
	if cfg.Audit == nil {
		return nil, func() {}, nil
	}
	l, err := audit.Open(cfg.Audit.Path, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("audit (%s): %w", cfg.Audit.Origin.Source(), err)
	}
	return l, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := l.Close(ctx); err != nil {
			log.Error("audit log", "error", err)
		}
		if n := l.Dropped(); n > 0 {
			log.Warn("audit records were lost (the log could not keep up, or a write failed); the log says where", "dropped", n)
		}
	}, nil
}
