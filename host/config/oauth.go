package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
)

// OAuth grants a built-in oauth block can use.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantJWTBearer         = "jwt_bearer"
	// GrantTokenExchange exchanges the gateway user's inbound token for a
	// token of the server (RFC 8693): per user, with no login.
	GrantTokenExchange = "token_exchange"
)

// OAuth is a server's built-in OAuth 2.1 client configuration (an oauth { }
// block). Without client_id the host registers itself: with a client ID
// metadata document (client_metadata_url) where the authorization server
// supports it, otherwise by dynamic client registration.
type OAuth struct {
	// Grant is how tokens are obtained: authorization_code (a user logs in
	// in a browser; the default), client_credentials (a machine client,
	// with client_secret or private_key_file), or jwt_bearer (a workload
	// identity token presented as an RFC 7523 assertion), or token_exchange
	// (the gateway user's inbound token exchanged for the server's, RFC
	// 8693; implies per_user).
	Grant string `hcl:"grant,optional" json:"grant,omitempty"`
	// PerUser keeps the server's tokens per gateway user (mcphost serve
	// --http with gateway { oauth }): each user logs in through the
	// authenticate pseudo-tool, or gets a token by token exchange, and never
	// uses another's. Without a gateway user (the CLI, a library program)
	// the host's own login is used.
	PerUser bool `hcl:"per_user,optional" json:"per_user,omitempty"`
	// Audience is the audience asked for in a token exchange (RFC 8693
	// audience). OPTIONAL: the server's resource identifier (its protected
	// resource metadata's resource), which is also sent as resource.
	Audience string `hcl:"audience,optional" json:"audience,omitempty"`
	// ClientID and ClientSecret identify a pre-registered client.
	ClientID     string `hcl:"client_id,optional" json:"client_id,omitempty"`
	ClientSecret string `hcl:"client_secret,optional" json:"client_secret,omitempty"`
	// ClientMetadataURL is an https URL serving this client's metadata
	// document (SEP-991), used as client_id where the AS supports it.
	ClientMetadataURL string `hcl:"client_metadata_url,optional" json:"client_metadata_url,omitempty"`
	// CallbackPort is the 127.0.0.1 port of the one-shot redirect listener
	// (0: a free port, usable with dynamic registration only).
	CallbackPort int `hcl:"callback_port,optional" json:"callback_port,omitempty"`
	// AuthServerMetadataURL overrides discovery: the RFC 8414 or OpenID
	// metadata document of the authorization server to use.
	AuthServerMetadataURL string `hcl:"auth_server_metadata_url,optional" json:"auth_server_metadata_url,omitempty"`
	// Scopes, if set, replace the scopes discovered from the server.
	Scopes []string `hcl:"scopes,optional" json:"scopes,omitempty"`
	// PrivateKeyFile (or PrivateKey, PEM text) signs private_key_jwt client
	// assertions for client_credentials; SigningAlgorithm is ES256 (default),
	// ES384, ES512, RS256 or PS256.
	PrivateKeyFile   string `hcl:"private_key_file,optional" json:"private_key_file,omitempty"`
	PrivateKey       string `hcl:"private_key,optional" json:"private_key,omitempty"`
	SigningAlgorithm string `hcl:"signing_algorithm,optional" json:"signing_algorithm,omitempty"`
	// AssertionFile (or Assertion) is the workload identity JWT for the
	// jwt_bearer grant; the file is re-read for every token request, so a
	// platform can rotate it.
	AssertionFile string `hcl:"assertion_file,optional" json:"assertion_file,omitempty"`
	Assertion     string `hcl:"assertion,optional" json:"assertion,omitempty"`
	// AllowLoopback permits OAuth endpoints on http:// loopback addresses.
	// For local development and tests only: the default refuses every
	// non-https and every private, loopback or link-local address (SSRF).
	AllowLoopback bool `hcl:"allow_loopback,optional" json:"allow_loopback,omitempty"`
}

// oauthSchema lists the attributes an oauth block accepts.
var oauthSchema, _ = gohcl.ImpliedBodySchema(&OAuth{})

// decodeOAuth decodes a server's oauth block (its body and where it is)
// and checks it; a relative key or assertion file is relative to the file.
func decodeOAuth(body hcl.Body, defRange hcl.Range, path string, ctx *hcl.EvalContext) (*OAuth, hcl.Diagnostics) {
	o := &OAuth{}
	_, diags := body.Content(oauthSchema)
	diags = explainUnsupported(diags, oauthSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	diags = append(diags, gohcl.DecodeBody(body, ctx, o)...)
	if diags.HasErrors() {
		return nil, diags
	}
	attrs, _ := body.JustAttributes()
	at := func(name string) *hcl.Range {
		if a, ok := attrs[name]; ok {
			return a.Expr.Range().Ptr()
		}
		return &defRange
	}
	if o.Grant == "" {
		o.Grant = GrantAuthorizationCode
	}
	grants := []string{GrantAuthorizationCode, GrantClientCredentials, GrantJWTBearer, GrantTokenExchange}
	if !slices.Contains(grants, o.Grant) {
		diags = append(diags, errorf(at("grant"), "Unknown grant", "grant %q is not supported. Allowed: %s.", o.Grant, strings.Join(grants, ", ")))
	}
	if o.CallbackPort < 0 || o.CallbackPort > 65535 {
		diags = append(diags, errorf(at("callback_port"), "Invalid callback_port", "callback_port must be a TCP port (1-65535), or 0 for a free one."))
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		diags = append(diags, errorf(at("client_secret"), "client_secret without client_id", "A client_secret belongs to a pre-registered client: set client_id too."))
	}
	if o.ClientMetadataURL != "" {
		if u, err := url.Parse(o.ClientMetadataURL); err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
			diags = append(diags, errorf(at("client_metadata_url"), "Invalid client_metadata_url", "client_metadata_url must be an https URL with a path, e.g. \"https://example.com/mcphost/client.json\"."))
		}
	}
	if o.AuthServerMetadataURL != "" {
		if u, err := url.Parse(o.AuthServerMetadataURL); err != nil || (u.Scheme != "https" && !(o.AllowLoopback && u.Scheme == "http")) || u.Host == "" {
			diags = append(diags, errorf(at("auth_server_metadata_url"), "Invalid auth_server_metadata_url", "auth_server_metadata_url must be an https URL of an RFC 8414 or OpenID metadata document."))
		}
	}
	if o.PrivateKeyFile != "" && o.PrivateKey != "" {
		diags = append(diags, errorf(at("private_key"), "Two private keys", "Set private_key_file or private_key, not both."))
	}
	o.PrivateKeyFile = resolvePath(path, o.PrivateKeyFile)
	o.AssertionFile = resolvePath(path, o.AssertionFile)
	switch o.SigningAlgorithm {
	case "", "ES256", "ES384", "ES512", "RS256", "PS256":
	default:
		diags = append(diags, errorf(at("signing_algorithm"), "Unsupported signing_algorithm", "signing_algorithm %q is not supported. Allowed: ES256, ES384, ES512, RS256, PS256.", o.SigningAlgorithm))
	}
	switch o.Grant {
	case GrantClientCredentials:
		if o.ClientID == "" {
			diags = append(diags, errorf(&defRange, "Missing client_id", "The client_credentials grant needs a pre-registered client: set client_id and client_secret or private_key_file."))
		} else if o.ClientSecret == "" && o.PrivateKeyFile == "" && o.PrivateKey == "" {
			diags = append(diags, errorf(&defRange, "Missing client credentials", "The client_credentials grant authenticates with client_secret or with private_key_file (private_key_jwt); set one."))
		}
	case GrantJWTBearer:
		if o.AssertionFile == "" && o.Assertion == "" {
			diags = append(diags, errorf(&defRange, "Missing assertion", "The jwt_bearer grant presents a workload identity token: set assertion_file (re-read for each request) or assertion."))
		}
	case GrantAuthorizationCode:
		for _, name := range []string{"private_key_file", "private_key", "assertion_file", "assertion"} {
			if _, ok := attrs[name]; ok {
				diags = append(diags, errorf(&attrs[name].NameRange, "Argument not valid for this grant", "%q is used by the client_credentials or jwt_bearer grant, not by %s.", name, o.Grant))
			}
		}
	case GrantTokenExchange:
		if o.ClientID == "" {
			diags = append(diags, errorf(&defRange, "Missing client_id", "The token_exchange grant authenticates the gateway to the server's authorization server: set client_id, and client_secret or private_key_file."))
		} else if o.ClientSecret == "" && o.PrivateKeyFile == "" && o.PrivateKey == "" {
			diags = append(diags, errorf(&defRange, "Missing client credentials", "The token_exchange grant authenticates the gateway's client with client_secret or with private_key_file (private_key_jwt); set one."))
		}
		for _, name := range []string{"assertion_file", "assertion", "client_metadata_url", "callback_port"} {
			if _, ok := attrs[name]; ok {
				diags = append(diags, errorf(&attrs[name].NameRange, "Argument not valid for this grant", "%q is not used by the token_exchange grant.", name))
			}
		}
		if a, ok := attrs["per_user"]; ok && !o.PerUser {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "token_exchange is per user", "The token_exchange grant exchanges each gateway user's own token: per_user cannot be false."))
		}
		o.PerUser = true
	}
	if o.PerUser && (o.Grant == GrantClientCredentials || o.Grant == GrantJWTBearer) {
		diags = append(diags, errorf(at("per_user"), "per_user with a machine grant", "The %s grant has no user: its token is the gateway's own. per_user needs authorization_code (each user logs in) or token_exchange.", o.Grant))
	}
	if _, ok := attrs["audience"]; ok && o.Grant != GrantTokenExchange {
		diags = append(diags, errorf(&attrs["audience"].NameRange, "Argument not valid for this grant", "audience is the audience asked for by the token_exchange grant, not by %s.", o.Grant))
	}
	return o, diags
}

// String describes the block for messages (never a secret).
func (o *OAuth) String() string {
	if o == nil {
		return "none"
	}
	return fmt.Sprintf("oauth (%s)", o.Grant)
}
