package config

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/zclconf/go-cty/cty"
)

// IdP is an enterprise identity provider (an idp "NAME" block). Auth plugins
// that log users in at an IdP (e.g. auth-xaa, Enterprise-Managed
// Authorization) name it with an `idp = "NAME"` attribute in a server's auth
// block, so that one IdP login serves every server behind it.
type IdP struct {
	Name string `json:"name"`
	// Issuer is the IdP's OpenID issuer URL (discovery starts there).
	Issuer string `hcl:"issuer" json:"issuer"`
	// ClientID and ClientSecret identify mcphost at the IdP (the secret only
	// for a confidential client).
	ClientID     string `hcl:"client_id" json:"client_id"`
	ClientSecret string `hcl:"client_secret,optional" json:"client_secret,omitempty"`
	// IDToken or IDTokenFile is an id_token source (e.g. one a platform
	// agent keeps fresh; the file is re-read when a new token is needed).
	// Without either, the plugin runs an OIDC login in the browser.
	IDToken     string `hcl:"id_token,optional" json:"id_token,omitempty"`
	IDTokenFile string `hcl:"id_token_file,optional" json:"id_token_file,omitempty"`
	// Scopes requested at the OIDC login (default: openid).
	Scopes []string `hcl:"scopes,optional" json:"scopes,omitempty"`
	// CallbackPort is the 127.0.0.1 port of the OIDC login's redirect URI,
	// as registered at the IdP (http://127.0.0.1:PORT/callback).
	CallbackPort int `hcl:"callback_port,optional" json:"callback_port,omitempty"`
	// LoginHint is passed to the IdP at login (e.g. the user's e-mail).
	LoginHint string `hcl:"login_hint,optional" json:"login_hint,omitempty"`
	// AllowLoopback permits http:// loopback IdP endpoints (tests, local use).
	AllowLoopback bool `hcl:"allow_loopback,optional" json:"allow_loopback,omitempty"`

	// Origin is where the block is declared.
	Origin *Origin `hcl:"-" json:"origin,omitempty"`
}

var idpSchema, _ = gohcl.ImpliedBodySchema(&IdP{})

// decodeIdP decodes an idp "NAME" block.
func decodeIdP(blk *hcl.Block, path string, scope Scope, ctx *hcl.EvalContext) (*IdP, hcl.Diagnostics) {
	name := blk.Labels[0]
	var diags hcl.Diagnostics
	if !ValidServerName(name) {
		diags = append(diags, errorf(&blk.LabelRanges[0], "Invalid idp name",
			"IdP name %q is not allowed: use letters and digits, optionally joined by single '-' or '_'.", name))
	}
	_, d := blk.Body.Content(idpSchema)
	diags = append(diags, explainUnsupported(d, idpSchema)...)
	if diags.HasErrors() {
		return nil, diags
	}
	p := &IdP{Name: name, Origin: &Origin{Scope: scope, File: path, Range: blk.DefRange}}
	diags = append(diags, gohcl.DecodeBody(blk.Body, ctx, p)...)
	if diags.HasErrors() {
		return nil, diags
	}
	attrs, _ := blk.Body.JustAttributes()
	at := func(name string) *hcl.Range {
		if a, ok := attrs[name]; ok {
			return a.Expr.Range().Ptr()
		}
		return &blk.DefRange
	}
	if u, err := url.Parse(p.Issuer); err != nil || u.Host == "" || (u.Scheme != "https" && !(p.AllowLoopback && u.Scheme == "http")) {
		diags = append(diags, errorf(at("issuer"), "Invalid issuer", "issuer must be the IdP's https issuer URL, e.g. \"https://acme.okta.com\" (http only with allow_loopback = true)."))
	}
	if p.ClientID == "" {
		diags = append(diags, errorf(at("client_id"), "Missing client_id", "client_id is mcphost's client ID registered at the IdP."))
	}
	if p.IDToken != "" && p.IDTokenFile != "" {
		diags = append(diags, errorf(at("id_token"), "Two id_token sources", "Set id_token_file or id_token, not both."))
	}
	if p.CallbackPort < 0 || p.CallbackPort > 65535 {
		diags = append(diags, errorf(at("callback_port"), "Invalid callback_port", "callback_port must be a TCP port (1-65535)."))
	}
	if p.IDToken == "" && p.IDTokenFile == "" && p.CallbackPort == 0 {
		diags = append(diags, errorf(&blk.DefRange, "No way to get an id_token",
			"Set callback_port (the port of the redirect URI http://127.0.0.1:PORT/callback registered at the IdP) for a browser login, or id_token_file for a token another program keeps fresh."))
	}
	if len(p.Scopes) > 0 && !slices.Contains(p.Scopes, "openid") {
		diags = append(diags, errorf(at("scopes"), "Missing openid scope", "An OIDC login needs the \"openid\" scope; add it to scopes."))
	}
	p.IDTokenFile = resolvePath(path, p.IDTokenFile)
	if scope == ScopeProject {
		diags = append(diags, warnf(&blk.DefRange, "Ignored in project scope",
			"An idp block decides where id_tokens are sent, so a project file cannot declare one; move it to the user configuration."))
		return nil, diags
	}
	return p, diags
}

// IdP returns the identity provider with the given name, or nil.
func (c *Config) IdP(name string) *IdP {
	for _, p := range c.IdPs {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// mergeIdPs collects the idp blocks of every file; a later (higher
// precedence) file's block replaces an earlier one of the same name.
func mergeIdPs(cfg *Config, files []*decodedFile) {
	byName := map[string]*IdP{}
	for _, f := range files {
		for _, p := range f.idps {
			byName[p.Name] = p
		}
	}
	for _, p := range byName {
		cfg.IdPs = append(cfg.IdPs, p)
	}
	sort.Slice(cfg.IdPs, func(i, j int) bool { return cfg.IdPs[i].Name < cfg.IdPs[j].Name })
}

// checkIdPRef resolves an auth block's idp attribute, if it has one, to an
// idp block.
func checkIdPRef(cfg *Config, ds *decodedServer, ctx *hcl.EvalContext) hcl.Diagnostics {
	attrs, _ := ds.auth.Body.JustAttributes()
	a, ok := attrs["idp"]
	if !ok {
		return nil
	}
	v, d := a.Expr.Value(ctx)
	if d.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return nil // the schema check reports the type
	}
	name := v.AsString()
	if p := cfg.IdP(name); p != nil {
		ds.IdP = p
		return nil
	}
	var names []string
	for _, p := range cfg.IdPs {
		names = append(names, p.Name)
	}
	detail := fmt.Sprintf("No idp block is named %q.", name)
	if len(names) > 0 {
		detail += " Declared: " + strings.Join(names, ", ") + "."
	} else {
		detail += " Declare one at the top level of the user configuration: idp \"" + name + "\" { issuer = …, client_id = … }."
	}
	return hcl.Diagnostics{errorf(a.Expr.Range().Ptr(), "Unknown idp", "%s", detail)}
}
