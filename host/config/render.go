package config

import (
	"fmt"
	"slices"
	"sort"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/mcphost/mcphost/host/permissions"
)

// Render prints the effective configuration as HCL (`mcphost config
// show`), each entry preceded by a comment naming its scope and source
// position. It prints what cfg holds, secrets included: a caller that
// shows it redacts them first.
func Render(cfg *Config) []byte {
	f := hclwrite.NewEmptyFile()
	b := f.Body()
	for _, file := range cfg.Files {
		comment(b, fmt.Sprintf("read %s (%s scope)", file.Path, file.Scope))
	}
	if cfg.ManagedExclusive {
		comment(b, "the managed configuration declares servers: it is exclusive")
	}
	b.AppendNewline()
	st := b.AppendNewBlock("settings", nil).Body()
	st.SetAttributeValue("connect_timeout", cty.StringVal(cfg.Settings.ConnectTimeout.String()))
	if cfg.Settings.ToolTimeout > 0 {
		st.SetAttributeValue("tool_timeout", cty.StringVal(cfg.Settings.ToolTimeout.String()))
	}
	if cfg.Settings.MaxToolDuration > 0 {
		st.SetAttributeValue("max_tool_duration", cty.StringVal(cfg.Settings.MaxToolDuration.String()))
	}
	st.SetAttributeValue("connect_concurrency_local", cty.NumberIntVal(int64(cfg.Settings.ConcurrencyLocal)))
	st.SetAttributeValue("connect_concurrency_remote", cty.NumberIntVal(int64(cfg.Settings.ConcurrencyRemote)))
	if cfg.Settings.OutputDir != "" {
		st.SetAttributeValue("output_dir", cty.StringVal(cfg.Settings.OutputDir))
	}
	st.SetAttributeValue("approve_all_project_servers", cty.BoolVal(cfg.Settings.ApproveAllProjectServers))
	// One permissions block for everyone's rules, then one per
	// for_principals condition (rules of one block share it).
	var conds []*permissions.Principals
	for _, r := range cfg.Permissions {
		if r.For != nil && !slices.Contains(conds, r.For) {
			conds = append(conds, r.For)
		}
	}
	for _, cond := range append([]*permissions.Principals{nil}, conds...) {
		if cond == nil && len(cfg.Permissions) == len(conds) && cfg.DefaultMode == "" && !slices.ContainsFunc(cfg.Permissions, func(r PermissionRule) bool { return r.For == nil }) {
			continue
		}
		b.AppendNewline()
		pb := b.AppendNewBlock("permissions", nil).Body()
		if cond != nil {
			fb := pb.AppendNewBlock("for_principals", nil).Body()
			if len(cond.Groups) > 0 {
				fb.SetAttributeValue("groups", stringList(cond.Groups))
			}
			if len(cond.Subjects) > 0 {
				fb.SetAttributeValue("subjects", stringList(cond.Subjects))
			}
		}
		for _, kind := range []permissions.Behavior{permissions.Allow, permissions.Ask, permissions.Deny} {
			var pats []string
			for _, r := range cfg.Permissions {
				if r.Behavior == kind && r.For == cond {
					pats = append(pats, r.Pattern)
					comment(pb, fmt.Sprintf("%s %q from %s", kind, r.Pattern, r.Origin.Source()))
				}
			}
			if len(pats) > 0 {
				pb.SetAttributeValue(kind.String(), stringList(pats))
			}
		}
		if cfg.DefaultMode != "" && cond == nil {
			comment(pb, "default_mode from "+cfg.DefaultModeOrigin.Source())
			pb.SetAttributeValue("default_mode", cty.StringVal(cfg.DefaultMode))
		}
	}
	writeChecks(b, cfg)
	writeGateway(b, cfg)
	writeTelemetry(b, cfg.Telemetry)
	writeState(b, cfg.State)
	for _, p := range cfg.IdPs {
		b.AppendNewline()
		comment(b, fmt.Sprintf("%s scope, %s:%d", p.Origin.Scope, p.Origin.File, p.Origin.Range.Start.Line))
		ib := b.AppendNewBlock("idp", []string{p.Name}).Body()
		for _, kv := range [][2]string{{"issuer", p.Issuer}, {"client_id", p.ClientID}, {"client_secret", p.ClientSecret},
			{"id_token", p.IDToken}, {"id_token_file", p.IDTokenFile}, {"login_hint", p.LoginHint}} {
			if kv[1] != "" {
				ib.SetAttributeValue(kv[0], cty.StringVal(kv[1]))
			}
		}
		if len(p.Scopes) > 0 {
			ib.SetAttributeValue("scopes", stringList(p.Scopes))
		}
		if p.CallbackPort != 0 {
			ib.SetAttributeValue("callback_port", cty.NumberIntVal(int64(p.CallbackPort)))
		}
		if p.AllowLoopback {
			ib.SetAttributeValue("allow_loopback", cty.True)
		}
	}
	for _, s := range cfg.Servers {
		b.AppendNewline()
		origin := fmt.Sprintf("%s scope, %s:%d", s.Origin.Scope, s.Origin.File, s.Origin.Range.Start.Line)
		if s.Origin.Scope == ScopeDynamic {
			origin = "dynamic scope"
		}
		if !s.Approved {
			origin += " (not approved: run `mcphost config approve " + s.Name + "`)"
		}
		if s.BlockedBy != "" {
			origin += " (blocked by policy: " + s.BlockedBy + ")"
		}
		comment(b, origin)
		writeServer(b.AppendNewBlock("server", []string{s.Name}).Body(), s)
	}
	for _, sk := range cfg.Skipped {
		b.AppendNewline()
		comment(b, fmt.Sprintf("not used: server %q from %s (%s scope): %s", sk.Server.Name, sk.Server.Origin.File, sk.Server.Origin.Scope, sk.Reason))
	}
	return f.Bytes()
}

// writeServer writes a server block's body: what the server runs or
// reaches, and its timeouts.
func writeServer(b *hclwrite.Body, s *Server) {
	b.SetAttributeValue("transport", cty.StringVal(s.Transport))
	if s.IsRemote() {
		b.SetAttributeValue("url", cty.StringVal(s.URL))
		if len(s.Headers) > 0 {
			b.SetAttributeValue("headers", ctyStringMap(s.Headers))
		}
		if len(s.HeadersHelper) > 0 {
			b.SetAttributeValue("headers_helper", stringList(s.HeadersHelper))
		}
		if o := s.OAuth; o != nil {
			ob := b.AppendNewBlock("oauth", nil).Body()
			ob.SetAttributeValue("grant", cty.StringVal(o.Grant))
			if o.PerUser {
				ob.SetAttributeValue("per_user", cty.True)
			}
			for _, kv := range [][2]string{{"audience", o.Audience}, {"client_id", o.ClientID}, {"client_secret", o.ClientSecret}, {"client_metadata_url", o.ClientMetadataURL},
				{"auth_server_metadata_url", o.AuthServerMetadataURL}, {"private_key_file", o.PrivateKeyFile}, {"private_key", o.PrivateKey},
				{"signing_algorithm", o.SigningAlgorithm}, {"assertion_file", o.AssertionFile}, {"assertion", o.Assertion}} {
				if kv[1] != "" {
					ob.SetAttributeValue(kv[0], cty.StringVal(kv[1]))
				}
			}
			if o.CallbackPort != 0 {
				ob.SetAttributeValue("callback_port", cty.NumberIntVal(int64(o.CallbackPort)))
			}
			if len(o.Scopes) > 0 {
				ob.SetAttributeValue("scopes", stringList(o.Scopes))
			}
			if o.AllowLoopback {
				ob.SetAttributeValue("allow_loopback", cty.True)
			}
		}
		if s.AuthScheme != "" {
			ab := b.AppendNewBlock("auth", []string{s.AuthScheme}).Body()
			if s.AuthPerUser {
				ab.SetAttributeValue("per_user", cty.True)
			}
			if s.AuthInboundToken {
				ab.SetAttributeValue("inbound_token", cty.True)
			}
			if t, err := ctyjson.ImpliedType(s.AuthConfig); err == nil {
				if v, err := ctyjson.Unmarshal(s.AuthConfig, t); err == nil && v.Type().IsObjectType() {
					keys := make([]string, 0, len(v.Type().AttributeTypes()))
					for k := range v.Type().AttributeTypes() {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						ab.SetAttributeValue(k, v.GetAttr(k))
					}
				}
			}
		}
	} else {
		b.SetAttributeValue("command", cty.StringVal(s.Command))
		if len(s.Args) > 0 {
			b.SetAttributeValue("args", stringList(s.Args))
		}
		if len(s.Env) > 0 {
			b.SetAttributeValue("env", ctyStringMap(s.Env))
		}
		if len(s.InheritEnv) > 0 {
			b.SetAttributeValue("inherit_env", stringList(s.InheritEnv))
		}
		if s.EnvFile != "" {
			b.SetAttributeValue("env_file", cty.StringVal(s.EnvFile))
		}
		if s.Cwd != "" {
			b.SetAttributeValue("cwd", cty.StringVal(s.Cwd))
		}
	}
	if s.Disabled {
		b.SetAttributeValue("disabled", cty.True)
	}
	if s.Registry != "" {
		b.SetAttributeValue("registry", cty.StringVal(s.Registry))
	}
	b.SetAttributeValue("connect_timeout", cty.StringVal(s.ConnectTimeout.String()))
	if s.ToolTimeout > 0 {
		b.SetAttributeValue("tool_timeout", cty.StringVal(s.ToolTimeout.String()))
	}
	if s.MaxToolDuration > 0 {
		b.SetAttributeValue("max_tool_duration", cty.StringVal(s.MaxToolDuration.String()))
	}
}

// writeGateway writes the gateway and audit blocks in effect.
func writeGateway(b *hclwrite.Body, cfg *Config) {
	if g := cfg.Gateway; g != nil {
		b.AppendNewline()
		comment(b, fmt.Sprintf("%s scope, %s:%d", g.Origin.Scope, g.Origin.File, g.Origin.Range.Start.Line))
		gb := b.AppendNewBlock("gateway", nil).Body()
		if g.URL != "" {
			gb.SetAttributeValue("url", cty.StringVal(g.URL))
		}
		if o := g.OAuth; o != nil {
			ob := gb.AppendNewBlock("oauth", nil).Body()
			for _, kv := range [][2]string{{"issuer", o.Issuer}, {"groups_claim", o.GroupsClaim}, {"jwks_url", o.JWKSURL},
				{"introspection_url", o.IntrospectionURL}, {"client_id", o.ClientID}, {"client_secret", o.ClientSecret}} {
				if kv[1] != "" {
					ob.SetAttributeValue(kv[0], cty.StringVal(kv[1]))
				}
			}
			ob.SetAttributeValue("audience", stringList(o.Audience))
			if len(o.Scopes) > 0 {
				ob.SetAttributeValue("scopes", stringList(o.Scopes))
			}
			if len(o.AcceptJWTTypes) > 0 {
				ob.SetAttributeValue("accept_jwt_types", stringList(o.AcceptJWTTypes))
			}
			if o.AllowLoopback {
				ob.SetAttributeValue("allow_loopback", cty.True)
			}
		}
		if r := g.RateLimit; r != nil {
			rb := gb.AppendNewBlock("rate_limit", nil).Body()
			if r.PerPrincipal != "" {
				rb.SetAttributeValue("per_principal", cty.StringVal(r.PerPrincipal))
			}
			if r.Burst != 0 {
				rb.SetAttributeValue("burst", cty.NumberIntVal(int64(r.Burst)))
			}
			if r.MaxConcurrent != 0 {
				rb.SetAttributeValue("max_concurrent", cty.NumberIntVal(int64(r.MaxConcurrent)))
			}
		}
	}
	if a := cfg.Audit; a != nil {
		b.AppendNewline()
		comment(b, fmt.Sprintf("%s scope, %s:%d", a.Origin.Scope, a.Origin.File, a.Origin.Range.Start.Line))
		b.AppendNewBlock("audit", nil).Body().SetAttributeValue("path", cty.StringVal(a.Path))
	}
}

// comment appends a comment line to body.
func comment(body *hclwrite.Body, text string) {
	body.AppendUnstructuredTokens(hclwrite.Tokens{{Type: hclsyntax.TokenComment, Bytes: []byte("# " + text + "\n")}})
}

// writeTelemetry writes the telemetry block in effect, if any.
func writeTelemetry(b *hclwrite.Body, t *Telemetry) {
	if t == nil {
		return
	}
	b.AppendNewline()
	comment(b, fmt.Sprintf("%s scope, %s:%d", t.Origin.Scope, t.Origin.File, t.Origin.Range.Start.Line))
	tb := b.AppendNewBlock("telemetry", nil).Body()
	tb.SetAttributeValue("service_name", cty.StringVal(t.ServiceName))
	if t.OTLPEndpoint != "" {
		tb.SetAttributeValue("otlp_endpoint", cty.StringVal(t.OTLPEndpoint))
	}
	tb.SetAttributeValue("otlp_protocol", cty.StringVal(t.OTLPProtocol))
	if len(t.OTLPHeaders) > 0 {
		tb.SetAttributeValue("otlp_headers", ctyStringMap(t.OTLPHeaders))
	}
	tb.SetAttributeValue("traces", cty.BoolVal(t.Traces))
	tb.SetAttributeValue("metrics", cty.BoolVal(t.Metrics))
	tb.SetAttributeValue("prometheus", cty.BoolVal(t.Prometheus))
	tb.SetAttributeValue("sample_ratio", cty.NumberFloatVal(t.SampleRatio))
}

// writeState writes the state block in effect, if any.
func writeState(b *hclwrite.Body, s *State) {
	if s == nil {
		return
	}
	b.AppendNewline()
	comment(b, fmt.Sprintf("%s scope, %s:%d", s.Origin.Scope, s.Origin.File, s.Origin.Range.Start.Line))
	sb := b.AppendNewBlock("state", nil).Body()
	sb.SetAttributeValue("backend", cty.StringVal(s.Backend))
	for _, a := range [][2]string{{"url", s.URL}, {"key_prefix", s.KeyPrefix}, {"ca_file", s.CAFile}, {"cert_file", s.CertFile}, {"key_file", s.KeyFile}} {
		if a[1] != "" {
			sb.SetAttributeValue(a[0], cty.StringVal(a[1]))
		}
	}
}

// ctyStringMap is m as an HCL object.
func ctyStringMap(m map[string]string) cty.Value {
	vals := map[string]cty.Value{}
	for k, v := range m {
		vals[k] = cty.StringVal(v)
	}
	return cty.ObjectVal(vals)
}
