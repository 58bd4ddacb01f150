package host

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/conn"
)

// AuthToolName is the original name of the pseudo-tool a server in
// needs-auth shows instead of its tools: mcp__SERVER__authenticate.
const AuthToolName = "authenticate"

// authTool is the pseudo-tool's definition.
func authTool(server string) *mcp.Tool {
	return &mcp.Tool{
		Name:        AuthToolName,
		Title:       "Log in to " + server,
		Description: fmt.Sprintf("The MCP server %q needs you to log in before its tools are available. Call this tool to start the login: it returns (or opens) a URL to complete in a browser; afterwards the server's real tools replace this one.", server),
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)},
	}
}

// IsAuthTool reports whether a registry tool is the login pseudo-tool of a
// server that needs authentication (for a per-user server: for ctx's
// gateway user).
func (h *Host) IsAuthTool(ctx context.Context, server, original string) bool {
	if original != AuthToolName {
		return false
	}
	c := h.conns.For(ctx, server)
	return c != nil && c.State() == conn.StateNeedsAuth && (c.Config().OAuth != nil || c.Config().AuthScheme != "")
}

// Login runs server's login (its oauth block's flow, or its auth plugin's
// interaction), showing the authorization URL through present (a browser
// opener, a printer, or a downstream elicitation), and waits for it to
// finish. On success the server's tools are listed again. For a per-user
// server and a gateway user (WithCaller), it is that user's login, kept
// for that user alone.
func (h *Host) Login(ctx context.Context, server string, present hauth.Presenter) error {
	c := h.conns.For(ctx, server)
	if c == nil {
		return fmt.Errorf("no server named %q is configured", server)
	}
	if c.Config().OAuth == nil && c.Config().AuthScheme == "" {
		return fmt.Errorf("%s has no oauth block; add `oauth {}` to its server block to use OAuth", server)
	}
	err := c.Login(ctx, present)
	h.regFor(ctx, server).Invalidate(server)
	return err
}

// CredentialsStored tells the host that credentials were stored under the
// token store key by another process (see state.AnnouncedTokens): the
// connections waiting for a login with that key connect again on their
// next use, adopting them. It reports whether one was waiting.
func (s *Serving) CredentialsStored(key string) bool { return s.h.conns.CredentialsStored(key) }

// LoggedInElsewhere tells the host that server's login for ctx's caller
// (see WithCaller; the host's own without one) was completed by another
// process sharing its token store (another replica of the gateway): a
// connection waiting for that login connects again on its next use,
// adopting the stored credentials.
func (s *Serving) LoggedInElsewhere(ctx context.Context, server string) {
	if c := s.h.conns.For(ctx, server); c != nil {
		c.CredentialsStored()
	}
}

// Logout revokes server's tokens at its authorization server (RFC 7009)
// and deletes them locally, even when revocation fails; for an auth plugin
// server, the plugin forgets its credentials and the saved state is deleted.
func (h *Host) Logout(ctx context.Context, server string) error {
	c := h.conns.For(ctx, server)
	if c == nil {
		return fmt.Errorf("no server named %q is configured", server)
	}
	err := c.Logout(ctx)
	h.regFor(ctx, server).InvalidateTools(server)
	return err
}

// AuthStatus describes a server's credentials; it never holds a token.
type AuthStatus struct {
	Server string `json:"server"`
	// Scheme is "oauth (GRANT)", "plugin SCHEME", "headers" or "none".
	Scheme string `json:"scheme"`
	// LoggedIn reports whether there is a token (stored or in memory).
	LoggedIn bool `json:"logged_in"`
	// OnDemand reports a machine grant (client credentials, JWT bearer):
	// it needs no login, and its tokens are obtained whenever the server is
	// connected and kept in memory only, so LoggedIn is true only in a
	// process that holds one.
	OnDemand        bool      `json:"on_demand,omitempty"`
	Expiry          time.Time `json:"expiry,omitzero"`
	Scopes          []string  `json:"scopes,omitempty"`
	Issuer          string    `json:"issuer,omitempty"`
	HasRefreshToken bool      `json:"has_refresh_token,omitempty"`
	State           string    `json:"state"`
}

// AuthStatuses reports the credentials of every remote server.
func (h *Host) AuthStatuses() []AuthStatus {
	var out []AuthStatus
	for _, name := range h.conns.Names() {
		c := h.conns.Get(name)
		s := c.Config()
		if !s.IsRemote() {
			continue
		}
		st := AuthStatus{Server: name, Scheme: "none", State: c.State().String()}
		switch {
		case s.OAuth != nil:
			st.Scheme = s.OAuth.String()
			st.OnDemand = hauth.IsMachineGrant(s.OAuth)
			if oh, err := c.OAuth(); err == nil {
				if r := oh.Record(); r != nil && r.Token != nil {
					st.LoggedIn = true
					st.Expiry = r.Token.Expiry
					st.Scopes = r.Scopes
					st.Issuer = r.Issuer
					st.HasRefreshToken = r.Token.RefreshToken != ""
				}
			}
		case s.AuthScheme != "":
			st.Scheme = "plugin " + s.AuthScheme
			if s.IdP != nil {
				st.Scheme += " (idp " + s.IdP.Name + ")"
			}
			if r := c.SavedPluginState(); r != nil && r.Token != nil {
				st.LoggedIn = r.Token.Expiry.IsZero() || time.Now().Before(r.Token.Expiry)
				st.Expiry = r.Token.Expiry
			}
		case len(s.Headers) > 0 || len(s.HeadersHelper) > 0:
			st.Scheme = "headers"
		}
		out = append(out, st)
	}
	return out
}

// loginResult is the result of a finished authenticate call: the server's
// tools, now available.
func (h *Host) loginResult(ctx context.Context, server string) *mcp.CallToolResult {
	tools, _ := h.regFor(ctx, server).ServerTools(ctx, server)
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
		Text: fmt.Sprintf("Logged in to %s. Its %d tools are now available: %s", server, len(tools), strings.Join(names, ", ")),
	}}}
}
