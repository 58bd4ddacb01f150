package config

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"

	"github.com/mcphost/mcphost/host/ratelimit"
)

// Gateway configures `mcphost serve --http` as a service shared by many
// users (a gateway block): its canonical URL, how clients authenticate
// (oauth) and how much each may ask (rate_limit).
//
//	gateway {
//	  url = "https://mcp.corp.example/mcp"
//	  oauth {
//	    issuer   = "https://login.corp.example"
//	    scopes   = ["mcp"]
//	  }
//	  rate_limit {
//	    per_principal  = "20/s"
//	    burst          = 40
//	    max_concurrent = 16
//	  }
//	}
//
// Only the user, local, cli and managed scopes may set it; the block of the
// highest scope wins whole.
type Gateway struct {
	// URL is the gateway's canonical resource URI (RFC 8707), as its
	// clients address it: the default audience of inbound tokens and the
	// resource of its protected resource metadata.
	URL string `json:"url,omitempty"`
	// OAuth makes the gateway an OAuth 2.1 resource server. nil: the
	// static bearer token (serve --token) guards it.
	OAuth *GatewayOAuth `json:"oauth,omitempty"`
	// RateLimit bounds each principal's requests. nil: no limit.
	RateLimit *RateLimit `json:"rate_limit,omitempty"`
	Origin    Origin     `json:"origin"`
}

// GatewayOAuth is a gateway's inbound OAuth configuration (gateway {
// oauth { … } }).
type GatewayOAuth struct {
	// Issuer is the authorization server; its metadata (RFC 8414 or OpenID
	// discovery) gives the JWKS.
	Issuer string `hcl:"issuer" json:"issuer"`
	// Audience lists the accepted aud values. Default: [Gateway.URL].
	Audience []string `hcl:"audience,optional" json:"audience,omitempty"`
	// Scopes are required on every request (403 insufficient_scope).
	Scopes []string `hcl:"scopes,optional" json:"scopes,omitempty"`
	// GroupsClaim names the token claim listing the principal's groups.
	// Default: "groups".
	GroupsClaim string `hcl:"groups_claim,optional" json:"groups_claim,omitempty"`
	// JWKSURL overrides the JWKS discovered from the issuer.
	JWKSURL string `hcl:"jwks_url,optional" json:"jwks_url,omitempty"`
	// IntrospectionURL is the RFC 7662 endpoint opaque (non-JWT) tokens are
	// checked at, as client ClientID with ClientSecret.
	IntrospectionURL string `hcl:"introspection_url,optional" json:"introspection_url,omitempty"`
	ClientID         string `hcl:"client_id,optional" json:"client_id,omitempty"`
	ClientSecret     string `hcl:"client_secret,optional" json:"client_secret,omitempty"`
	// AllowLoopback permits an http issuer (and JWKS, introspection) on a
	// loopback address: tests and local development only.
	AllowLoopback bool `hcl:"allow_loopback,optional" json:"allow_loopback,omitempty"`
	// AcceptJWTTypes lists the typ header values accepted on JWT access
	// tokens: "at+jwt" (RFC 9068), "JWT" and "none" (no typ), compared
	// without case and without an "application/" prefix. Default:
	// ["at+jwt"].
	AcceptJWTTypes []string `hcl:"accept_jwt_types,optional" json:"accept_jwt_types,omitempty"`
}

// jwtTypes are the typ values accept_jwt_types may hold besides "none", as
// inbound.CheckTypes accepts them (normalized: lower case, without
// "application/").
var jwtTypes = []string{"at+jwt", "jwt"}

// RateLimit bounds each principal's requests to the gateway (gateway {
// rate_limit { … } }).
type RateLimit struct {
	// PerPrincipal is the sustained rate, like "20/s", "600/m" or "5000/h"
	// ("" for none).
	PerPrincipal string `hcl:"per_principal,optional" json:"per_principal,omitempty"`
	// Burst is how many requests may come at once above the rate (default:
	// the rate per second, at least 1).
	Burst int `hcl:"burst,optional" json:"burst,omitempty"`
	// MaxConcurrent caps a principal's requests in flight (0: no cap).
	MaxConcurrent int `hcl:"max_concurrent,optional" json:"max_concurrent,omitempty"`
}

// Audit configures the gateway's audit log (an audit block): one JSON line
// per tool call and per refused request. Only the user, local, cli and
// managed scopes may set it; the highest scope's block wins.
type Audit struct {
	// Path is the file lines are appended to, or "-" for stderr.
	Path   string `json:"path"`
	Origin Origin `json:"origin"`
}

// gatewayBody is the gateway block as written.
type gatewayBody struct {
	URL       string        `hcl:"url,optional"`
	OAuth     *GatewayOAuth `hcl:"oauth,block"`
	RateLimit *RateLimit    `hcl:"rate_limit,block"`
}

var (
	gatewaySchema, _   = gohcl.ImpliedBodySchema(&gatewayBody{})
	gatewayOAuthSch, _ = gohcl.ImpliedBodySchema(&GatewayOAuth{})
	rateLimitSchema, _ = gohcl.ImpliedBodySchema(&RateLimit{})
	auditSchema        = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "path", Required: true}}}
)

// decodeGateway decodes a gateway block.
func decodeGateway(b *hcl.Block, path string, scope Scope, ctx *hcl.EvalContext) (*Gateway, hcl.Diagnostics) {
	content, diags := b.Body.Content(gatewaySchema)
	diags = explainUnsupported(diags, gatewaySchema)
	for _, nb := range content.Blocks {
		schema := gatewayOAuthSch
		if nb.Type == "rate_limit" {
			schema = rateLimitSchema
		}
		_, d := nb.Body.Content(schema)
		diags = append(diags, explainUnsupported(d, schema)...)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	var body gatewayBody
	if d := gohcl.DecodeBody(b.Body, ctx, &body); d.HasErrors() {
		return nil, append(diags, d...)
	}
	g := &Gateway{URL: body.URL, OAuth: body.OAuth, RateLimit: body.RateLimit, Origin: Origin{Scope: scope, File: path, Range: b.DefRange}}
	attrs, _ := b.Body.JustAttributes()
	at := func(attrs hcl.Attributes, name string, def *hcl.Range) *hcl.Range {
		if a, ok := attrs[name]; ok {
			return a.Expr.Range().Ptr()
		}
		return def
	}
	if g.URL != "" {
		if u, err := url.Parse(g.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
			diags = append(diags, errorf(at(attrs, "url", &b.DefRange), "Invalid gateway url",
				"url must be the absolute http(s) URL clients use to reach the gateway's MCP endpoint, e.g. \"https://mcp.corp.example/mcp\", without a fragment."))
		}
	}
	for _, nb := range content.Blocks {
		nattrs, _ := nb.Body.JustAttributes()
		switch nb.Type {
		case "oauth":
			diags = append(diags, checkGatewayOAuth(g, nb, nattrs, at)...)
		case "rate_limit":
			r := g.RateLimit
			if r.PerPrincipal != "" {
				if _, err := ratelimit.ParseRate(r.PerPrincipal); err != nil {
					diags = append(diags, errorf(at(nattrs, "per_principal", &nb.DefRange), "Invalid per_principal", "%s.", err))
				}
			}
			if r.Burst < 0 {
				diags = append(diags, errorf(at(nattrs, "burst", &nb.DefRange), "Invalid burst", "burst must be 0 (the default: the rate per second) or more."))
			}
			if r.MaxConcurrent < 0 {
				diags = append(diags, errorf(at(nattrs, "max_concurrent", &nb.DefRange), "Invalid max_concurrent", "max_concurrent must be 0 (no cap) or more."))
			}
			if r.PerPrincipal == "" && r.Burst != 0 {
				diags = append(diags, warnf(at(nattrs, "burst", &nb.DefRange), "burst without per_principal", "burst applies to a rate: set per_principal too, or drop burst."))
			}
			if r.PerPrincipal == "" && r.MaxConcurrent == 0 {
				diags = append(diags, warnf(&nb.DefRange, "Empty rate_limit", "rate_limit sets neither per_principal nor max_concurrent: nothing is limited."))
			}
		}
	}
	return g, diags
}

func checkGatewayOAuth(g *Gateway, nb *hcl.Block, attrs hcl.Attributes, at func(hcl.Attributes, string, *hcl.Range) *hcl.Range) hcl.Diagnostics {
	var diags hcl.Diagnostics
	o := g.OAuth
	httpsURL := func(name, v string) {
		if v == "" {
			return
		}
		u, err := url.Parse(v)
		loopback := u != nil && (u.Hostname() == "localhost" || net.ParseIP(u.Hostname()) != nil && net.ParseIP(u.Hostname()).IsLoopback())
		if err != nil || u.Host == "" || (u.Scheme != "https" && !(o.AllowLoopback && u.Scheme == "http" && loopback)) {
			diags = append(diags, errorf(at(attrs, name, &nb.DefRange), "Invalid "+name,
				"%s must be an https URL (http only on a loopback address with allow_loopback = true, for tests).", name))
		}
	}
	httpsURL("issuer", o.Issuer)
	httpsURL("jwks_url", o.JWKSURL)
	httpsURL("introspection_url", o.IntrospectionURL)
	if g.URL == "" {
		diags = append(diags, errorf(&nb.DefRange, "Missing gateway url",
			"A gateway with oauth needs its canonical URL, url = \"https://HOST/mcp\" in the gateway block: it is the resource clients get tokens for (the default audience) and the resource of its protected resource metadata."))
	} else if len(o.Audience) == 0 {
		o.Audience = []string{g.URL}
	}
	for _, a := range o.Audience {
		if strings.TrimSpace(a) == "" {
			diags = append(diags, errorf(at(attrs, "audience", &nb.DefRange), "Invalid audience", "an audience may not be empty."))
		}
	}
	if o.IntrospectionURL != "" && o.ClientID == "" {
		diags = append(diags, errorf(at(attrs, "introspection_url", &nb.DefRange), "Missing client_id",
			"The introspection endpoint authenticates the gateway: set client_id and client_secret."))
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		diags = append(diags, errorf(at(attrs, "client_secret", &nb.DefRange), "client_secret without client_id", "Set client_id too."))
	}
	for _, t := range o.AcceptJWTTypes {
		// "none" is a word of the configuration (no typ header), not a
		// media type: "application/none" is no type.
		n := strings.TrimPrefix(strings.ToLower(t), "application/")
		if !strings.EqualFold(t, "none") && !slices.Contains(jwtTypes, n) {
			diags = append(diags, errorf(at(attrs, "accept_jwt_types", &nb.DefRange), "Invalid accept_jwt_types",
				"%q is not an access token type: accept_jwt_types may list \"at+jwt\" (RFC 9068, the default), \"JWT\" (for issuers that mark access tokens so, such as Microsoft Entra ID and Keycloak) and \"none\" (no typ header, such as Okta's custom authorization servers).", t))
			break
		}
	}
	if o.GroupsClaim == "" {
		o.GroupsClaim = "groups"
	}
	return diags
}

// decodeAudit decodes an audit block.
func decodeAudit(b *hcl.Block, path string, scope Scope, ctx *hcl.EvalContext) (*Audit, hcl.Diagnostics) {
	content, diags := b.Body.Content(auditSchema)
	diags = explainUnsupported(diags, auditSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	a := &Audit{Origin: Origin{Scope: scope, File: path, Range: b.DefRange}}
	attr := content.Attributes["path"]
	if d := decodeExpr(attr.Expr, ctx, &a.Path); d.HasErrors() {
		return nil, append(diags, d...)
	}
	switch {
	case a.Path == "":
		diags = append(diags, errorf(attr.Expr.Range().Ptr(), "Invalid audit path", "path is a file to append to, or \"-\" for stderr."))
	case a.Path != "-":
		a.Path = resolvePath(path, a.Path)
		if !filepath.IsAbs(a.Path) {
			diags = append(diags, errorf(attr.Expr.Range().Ptr(), "Invalid audit path", "path %q must be absolute (or relative to the file).", a.Path))
		}
	}
	return a, diags
}

// mergeGateway takes the gateway and audit blocks of the highest scope that
// has them; a project's are ignored, with a warning.
func mergeGateway(cfg *Config, files []*decodedFile) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, f := range files {
		if f.scope == ScopeProject {
			for _, r := range []*hcl.Range{f.gatewayRange, f.auditRange} {
				if r != nil {
					diags = append(diags, warnf(r, "Ignored in project scope",
						"gateway and audit blocks are only honoured in the user, local, cli and managed scopes: a repository may not decide who can use the gateway or where its audit goes."))
				}
			}
			continue
		}
		if f.gateway != nil {
			cfg.Gateway = f.gateway
		}
		if f.audit != nil {
			cfg.Audit = f.audit
		}
	}
	return diags
}

// String describes the gateway's inbound authentication for messages.
func (g *Gateway) String() string {
	if g == nil || g.OAuth == nil {
		return "static token"
	}
	return fmt.Sprintf("oauth (issuer %s)", g.OAuth.Issuer)
}

// Equal reports whether g and o configure the gateway alike: same url,
// oauth and rate_limit (where the blocks are written does not count).
// Either may be nil (no gateway block). The gateway's listener and its
// inbound authentication are set up once, so a reload that changes the
// block needs a restart.
func (g *Gateway) Equal(o *Gateway) bool {
	if g == nil || o == nil {
		return g == o
	}
	return g.URL == o.URL && reflect.DeepEqual(g.OAuth, o.OAuth) && reflect.DeepEqual(g.RateLimit, o.RateLimit)
}

// Equal reports whether a and o configure the audit log alike (where the
// blocks are written does not count). Either may be nil.
func (a *Audit) Equal(o *Audit) bool {
	if a == nil || o == nil {
		return a == o
	}
	return a.Path == o.Path
}
