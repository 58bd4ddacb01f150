package sdk

import (
	"context"
	"encoding/json"
	"time"
)

// Auth supplies credentials for servers, with the semantics of the go-sdk's
// auth.OAuthHandler: Token is asked before each request, Authorize after the
// server answers 401 or 403. Methods are called concurrently for many servers.
type Auth interface {
	// Token returns the credential for a request to the server, or an empty
	// AccessToken if there is none yet.
	Token(ctx context.Context, req *TokenRequest) (*TokenResponse, error)
	// Authorize reacts to a 401/403: it obtains a credential (so that the next
	// Token returns it), possibly by asking the host to drive an Interaction.
	Authorize(ctx context.Context, req *AuthorizeRequest) (*AuthorizeResponse, error)
}

// Interactive is implemented by auth plugins whose Authorize can ask the host
// to drive a user interaction (open a URL, receive a callback).
type Interactive interface {
	CompleteInteraction(ctx context.Context, req *CompleteInteractionRequest) (*CompleteInteractionResponse, error)
}

// Forgetter is implemented by auth plugins that hold credentials: Forget
// drops a server's (on `mcphost auth logout`), so that neither Token nor
// saved state returns them again.
type Forgetter interface {
	Forget(ctx context.Context, req *ForgetRequest) (*ForgetResponse, error)
}

// ForgetRequest names the server whose credentials to drop.
type ForgetRequest struct{ Server ServerRef }

// ForgetResponse reports problems.
type ForgetResponse struct{ Diagnostics Diagnostics }

// ServerRef identifies the server a credential is for.
type ServerRef struct {
	Scheme     string
	ServerName string
	ServerURL  string
	// Config is the auth block's configuration (a JSON object).
	Config json.RawMessage
	// IdP is the identity provider the auth block names with its `idp`
	// attribute: the host resolves the name to the user's idp "NAME" block
	// and sends it as a JSON object (see IdPConfig); nil if none.
	IdP json.RawMessage
	// SavedState is what the plugin last returned in
	// TokenResponse.SavedState for this server, kept by the host in its
	// token store across restarts; nil if none.
	SavedState []byte
	// Principal is the gateway user whose credentials the request is for;
	// nil for the host's own user (the CLI, a library program, or a server
	// whose auth block does not set per_user). A plugin keeps the
	// credentials of each principal apart, e.g. keys its caches by Issuer
	// and Subject.
	Principal *Principal
}

// Principal is the gateway user (mcphost serve --http with gateway { oauth })
// whose credentials a per-user server's request is for:
// auth "SCHEME" { per_user = true }.
type Principal struct {
	// Issuer and Subject identify the user (the inbound token's iss and sub).
	Issuer  string
	Subject string
	// Groups are the user's groups, from the inbound token's groups claim.
	Groups []string
	// Token is the user's inbound access token, sent only when the auth
	// block sets inbound_token = true, so the plugin can exchange it for an
	// upstream token (RFC 8693) itself. A plugin must never log it or send it
	// to the upstream server as it is.
	Token string
}

// IdPConfig is the JSON form of an idp "NAME" block, sent in ServerRef.IdP.
type IdPConfig struct {
	Name         string   `json:"name"`
	Issuer       string   `json:"issuer"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret,omitempty"`
	IDToken      string   `json:"id_token,omitempty"`
	IDTokenFile  string   `json:"id_token_file,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	CallbackPort int      `json:"callback_port,omitempty"`
	LoginHint    string   `json:"login_hint,omitempty"`
	// AllowLoopback permits http:// loopback endpoints (tests and local use).
	AllowLoopback bool `json:"allow_loopback,omitempty"`
}

// TokenRequest asks for a server's current credential.
type TokenRequest struct{ Server ServerRef }

// TokenResponse carries a credential; a zero Expiry means it does not expire.
type TokenResponse struct {
	AccessToken string
	TokenType   string
	Expiry      time.Time
	Diagnostics Diagnostics
	// SavedState, if set, is opaque state (it may hold secrets) the host
	// stores for the server in its token store, owner-only, and sends back
	// in ServerRef.SavedState, also after a restart: a plugin resumes from
	// it instead of asking the user to log in again. Empty means no change;
	// the host deletes it on `mcphost auth logout`.
	SavedState []byte
}

// AuthorizeRequest reports a 401/403 from the server.
type AuthorizeRequest struct {
	Server          ServerRef
	RequestURL      string
	Status          int
	WWWAuthenticate string
}

// AuthorizeResponse may ask the host to drive an interaction.
type AuthorizeResponse struct {
	Interaction *Interaction
	Diagnostics Diagnostics
}

// Interaction asks the host to open OpenURL for the user and, if
// CallbackPath is set, to listen once on 127.0.0.1 (on CallbackPort, or a
// port the host chooses if 0) for that path and pass the callback's query to
// CompleteInteraction. The host drives interactions only when the user asks
// to log in (`mcphost auth login`, the authenticate pseudo-tool); a 401 in
// the background puts the server in needs-auth instead.
type Interaction struct {
	ID           string
	OpenURL      string
	CallbackPath string
	CallbackPort int
}

// CompleteInteractionRequest carries the callback of an interaction.
type CompleteInteractionRequest struct {
	Server        ServerRef
	ID            string
	CallbackQuery string
	RedirectURI   string
}

// CompleteInteractionResponse reports the outcome.
type CompleteInteractionResponse struct {
	Diagnostics Diagnostics
}
