package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// fileSchema lists the blocks of a configuration file.
var fileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "server", LabelNames: []string{"name"}},
		{Type: "settings"},
		{Type: "plugin", LabelNames: []string{"name"}},
		{Type: "permissions"},
		{Type: "policy"},
		{Type: "idp", LabelNames: []string{"name"}},
		{Type: "endpoint", LabelNames: []string{"name"}},
		{Type: "gateway"},
		{Type: "audit"},
		{Type: "telemetry"},
		{Type: "state"},
		{Type: "hook", LabelNames: []string{"event"}},
		{Type: "interceptor", LabelNames: []string{"name"}},
	},
}

// decodedFile is what one configuration file declares, before merging.
type decodedFile struct {
	path  string
	scope Scope
	// base is the directory relative program paths and cwd of its server
	// blocks are relative to: the file's own, but for the local scope (a
	// file kept in the config directory, about a project) the project's
	// root.
	base         string
	serverBlocks []*hcl.Block
	// checkBlocks are its hook and interceptor blocks, in declared order,
	// decoded by mergeChecks once servers and plugins are known.
	checkBlocks  []*hcl.Block
	servers      []*decodedServer
	plugins      []*Plugin
	idps         []*IdP
	endpoints    []*decodedEndpoint
	settings     *partialSettings
	rules        []PermissionRule
	allowed      []*ServerMatcher
	denied       []*ServerMatcher
	hasAllowList bool
	mode         string
	modeRange    hcl.Range
	gateway      *Gateway
	audit        *Audit
	telemetry    *Telemetry
	// gatewayRange, auditRange and telemetryRange are where those blocks
	// are (the first of each), also in a project file, whose blocks are not
	// decoded.
	gatewayRange, auditRange, telemetryRange *hcl.Range
	state                                    *State
	stateRange                               *hcl.Range
}

// decodeFile decodes one parsed file's blocks but its servers, which it
// collects: decodeServers decodes those once the available transports are
// known.
func decodeFile(f *hcl.File, path string, scope Scope, ctx *hcl.EvalContext) (*decodedFile, hcl.Diagnostics) {
	out := &decodedFile{path: path, scope: scope, base: filepath.Dir(path)}
	content, diags := f.Body.Content(fileSchema)
	diags = explainUnsupported(diags, fileSchema)
	seenPlugins := map[string]hcl.Range{}
	for _, b := range content.Blocks {
		switch b.Type {
		case "server":
			out.serverBlocks = append(out.serverBlocks, b)
		case "hook", "interceptor":
			out.checkBlocks = append(out.checkBlocks, b)
		case "plugin":
			p, d := decodePlugin(b, path, scope, ctx)
			diags = append(diags, d...)
			if p == nil {
				continue
			}
			if first, dup := seenPlugins[p.Name]; dup {
				diags = append(diags, errorf(&b.LabelRanges[0], "Duplicate plugin",
					"A plugin named %q is already declared at %s; each plugin name may appear once per file.", p.Name, first))
				continue
			}
			seenPlugins[p.Name] = b.LabelRanges[0]
			out.plugins = append(out.plugins, p)
		case "idp":
			p, d := decodeIdP(b, path, scope, ctx)
			diags = append(diags, d...)
			if p == nil {
				continue
			}
			for _, q := range out.idps {
				if q.Name == p.Name {
					diags = append(diags, errorf(&b.LabelRanges[0], "Duplicate idp", "An idp named %q is already declared at %s.", p.Name, q.Origin.Range))
					p = nil
					break
				}
			}
			if p != nil {
				out.idps = append(out.idps, p)
			}
		case "endpoint":
			if scope == ScopeProject {
				// An endpoint restricts what a client is served: a
				// repository must not widen the user's.
				diags = append(diags, warnf(&b.DefRange, "Ignored in project scope",
					"An endpoint block decides what a gateway's clients are served, so a project file cannot declare one; move it to the user configuration."))
				continue
			}
			e, d := decodeEndpoint(b, path, scope, ctx)
			diags = append(diags, d...)
			if e == nil {
				continue
			}
			if i := slices.IndexFunc(out.endpoints, func(q *decodedEndpoint) bool { return q.Name == e.Name }); i >= 0 {
				diags = append(diags, errorf(&b.LabelRanges[0], "Duplicate endpoint", "An endpoint named %q is already declared at %s.", e.Name, out.endpoints[i].Origin.Range))
				continue
			}
			out.endpoints = append(out.endpoints, e)
		case "permissions":
			diags = append(diags, decodePermissions(b, out, ctx)...)
		case "gateway", "audit", "telemetry", "state":
			first := map[string]**hcl.Range{"gateway": &out.gatewayRange, "audit": &out.auditRange, "telemetry": &out.telemetryRange, "state": &out.stateRange}[b.Type]
			if *first != nil {
				diags = append(diags, errorf(&b.DefRange, "Duplicate "+b.Type+" block",
					"Only one %s block is allowed per file; the first is at %s.", b.Type, *first))
				continue
			}
			*first = b.DefRange.Ptr()
			if scope == ScopeProject {
				continue // not honoured (mergeGateway, mergeTelemetry warn), so not evaluated
			}
			var d hcl.Diagnostics
			switch b.Type {
			case "gateway":
				out.gateway, d = decodeGateway(b, path, scope, ctx)
			case "audit":
				out.audit, d = decodeAudit(b, path, scope, ctx)
			case "state":
				out.state, d = decodeState(b, path, scope, ctx)
			default:
				out.telemetry, d = decodeTelemetry(b, path, scope, ctx)
			}
			diags = append(diags, d...)
		case "policy":
			if scope != ScopeManaged {
				diags = append(diags, errorf(&b.DefRange, "Policy outside the managed scope",
					"A policy block (allowed_servers, denied_servers) is only honoured in the managed file (%s by default); this %s-scope one has no effect.", DefaultManagedFile, scope))
				continue
			}
			diags = append(diags, decodePolicy(b, out, ctx)...)
		case "settings":
			if out.settings != nil {
				diags = append(diags, errorf(&b.DefRange, "Duplicate settings block",
					"Only one settings block is allowed per file; the first is at %s.", out.settings.defRange))
				continue
			}
			ps, d := decodeSettings(b, ctx)
			diags = append(diags, d...)
			out.settings = ps
		}
	}
	return out, diags
}

// decodeServers decodes a file's server blocks and checks each against what
// the plugins provide. A project server is first decoded as written, env()
// calls unevaluated, and its approval hash taken from that; only an approved
// one is decoded again with the environment. In a project file, a block with
// an error is reported (as a warning) and skipped.
func decodeServers(df *decodedFile, ctx *hcl.EvalContext, cfg *Config, unlocked []string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	seen := map[string]hcl.Range{}
	decode := func(b *hcl.Block, ctx *hcl.EvalContext, written bool) (*decodedServer, hcl.Diagnostics) {
		s, d := decodeServer(b, df.path, df.base, df.scope, ctx, cfg.Transports, written)
		d = append(d, checkServer(cfg, s, ctx, unlocked)...)
		for _, diag := range d {
			if diag.Summary == "Unknown transport" && len(unlocked) > 0 {
				diag.Detail += fmt.Sprintf(" Plugins whose transports are not known yet: %s; run `mcphost plugins lock` to record what they provide.", strings.Join(unlocked, ", "))
			}
		}
		return s, d
	}
	for _, b := range df.serverBlocks {
		var s *decodedServer
		var d hcl.Diagnostics
		if fromRegistry := df.scope != ScopeProject && hasRegistryAttr(b); df.scope == ScopeProject || fromRegistry {
			// A registry server (registry = "NAME@VERSION") is approved
			// like a project server, as written; in the user's own files
			// it may read secret(), shown as the call until approved.
			if fromRegistry {
				s, d = decode(b, displayContext(), true)
			} else {
				s, d = decode(b, writtenContext(), true)
				d = append(d, checkWritten(b.Body)...)
			}
			if !d.HasErrors() {
				d = append(d, checkApprovedEnvFile(s.Server, s.attrs["env_file"], df.scope == ScopeProject, df.base)...)
			}
			if !d.HasErrors() {
				h := s.approvalHash()
				written := *s.Server
				if !fromRegistry && cfg.Settings.ApproveAllProjectServers || cfg.Settings.ApprovedProjectServers[s.Name] == h {
					s, d = decode(b, ctx, false)
					s.envFileDigest = written.envFileDigest
				}
				s.writtenHash, s.written = h, &written
			}
			if d.HasErrors() {
				s = nil
			}
			d = forScope(df.scope, d)
		} else {
			s, d = decode(b, ctx, false)
		}
		diags = append(diags, d...)
		if s == nil {
			continue
		}
		if first, dup := seen[s.Name]; dup {
			diags = append(diags, forScope(df.scope, hcl.Diagnostics{errorf(&s.nameRange, "Duplicate server",
				"A server named %q is already declared at %s; each server name may appear once per file.", s.Name, first)})...)
			continue
		}
		seen[s.Name] = s.nameRange
		df.servers = append(df.servers, s)
	}
	return diags
}

// serverBlock is the body of a server "NAME" block as written. The order of
// its fields is the order diagnostics list what is allowed in.
type serverBlock struct {
	Transport  string            `hcl:"transport,optional"`
	Command    string            `hcl:"command,optional"`
	Args       []string          `hcl:"args,optional"`
	Env        map[string]string `hcl:"env,optional"`
	InheritEnv []string          `hcl:"inherit_env,optional"`
	EnvFile    string            `hcl:"env_file,optional"`
	Cwd        string            `hcl:"cwd,optional"`
	URL        string            `hcl:"url,optional"`
	Headers    map[string]string `hcl:"headers,optional"`
	// HeadersHelper is a program ("/usr/local/bin/get-token") or an argv
	// (["get-token", "--audience", "mcp"]).
	HeadersHelper         cty.Value `hcl:"headers_helper,optional"`
	Disabled              bool      `hcl:"disabled,optional"`
	ConnectTimeout        string    `hcl:"connect_timeout,optional"`
	ToolTimeout           string    `hcl:"tool_timeout,optional"`
	MaxToolDuration       string    `hcl:"max_tool_duration,optional"`
	CAFile                string    `hcl:"ca_file,optional"`
	ClientCertFile        string    `hcl:"client_cert_file,optional"`
	ClientKeyFile         string    `hcl:"client_key_file,optional"`
	TLSServerName         string    `hcl:"tls_server_name,optional"`
	TLSInsecureSkipVerify bool      `hcl:"tls_insecure_skip_verify,optional"`
	ProxyURL              string    `hcl:"proxy_url,optional"`
	// TransportOptions is an object of options for a plugin transport.
	TransportOptions cty.Value `hcl:"transport_options,optional"`
	LegacySession    *bool     `hcl:"legacy_session,optional"`
	LegacyPool       *int      `hcl:"legacy_pool,optional"`
	// Registry is the MCP Registry entry the server was installed from.
	Registry string `hcl:"registry,optional"`

	Auth  []*authBlock  `hcl:"auth,block"`
	OAuth []*oauthBlock `hcl:"oauth,block"`
	Tools []*toolsBlock `hcl:"tools,block"`
}

// authBlock is an auth "SCHEME" block. Its body belongs to the plugin that
// provides the scheme: decodeAuth turns it into Server.AuthConfig, and
// checkAuth checks it against the schema the plugin reported once the
// plugins are known. per_user and inbound_token are the host's.
type authBlock struct {
	Scheme      string    `hcl:"scheme,label"`
	SchemeRange hcl.Range `hcl:"scheme,label_range"`
	Body        hcl.Body  `hcl:",remain"`
	DefRange    hcl.Range `hcl:",def_range"`
}

// oauthBlock is a server's oauth block, decoded by decodeOAuth.
type oauthBlock struct {
	Body     hcl.Body  `hcl:",remain"`
	DefRange hcl.Range `hcl:",def_range"`
}

// decodedServer is a server block plus what validation needs.
type decodedServer struct {
	*Server
	nameRange hcl.Range
	defRange  hcl.Range
	// attrs are the block's attributes that decoded, as written.
	attrs hcl.Attributes
	// oauthRange is where the oauth block is, if there is one.
	oauthRange *hcl.Range
	// auth is the auth "SCHEME" block and optionsAttr transport_options,
	// both checked against the plugin's schema (checkServer); nil when the
	// block did not decode.
	auth        *authBlock
	optionsAttr *hcl.Attribute
}

// decodeServer decodes a server block; written says ctx is writtenContext
// (env() calls kept as written, for a project server before approval).
// A server whose block decodes is then validated (checkServerBlock).
func decodeServer(b *hcl.Block, path, base string, scope Scope, ctx *hcl.EvalContext, transports []string, written bool) (*decodedServer, hcl.Diagnostics) {
	name := b.Labels[0]
	var diags hcl.Diagnostics
	if !ValidServerName(name) {
		diags = append(diags, errorf(&b.LabelRanges[0], "Invalid server name",
			"Server name %q is not allowed: use letters and digits, optionally joined by single '-' or '_' (e.g. \"github\", \"my-server\"), at most %d characters.", name, MaxServerNameLen))
	}
	sb := serverBlock{Transport: TransportStdio}
	attrs, d := decodeBody(b.Body, ctx, &sb)
	diags = append(diags, d...)
	s := &Server{
		Name: name, Transport: sb.Transport,
		Command: sb.Command, Args: sb.Args, Env: sb.Env, InheritEnv: sb.InheritEnv, EnvFile: sb.EnvFile, Cwd: sb.Cwd,
		URL: sb.URL, Headers: sb.Headers,
		CAFile: resolvePath(path, sb.CAFile), ClientCertFile: resolvePath(path, sb.ClientCertFile), ClientKeyFile: resolvePath(path, sb.ClientKeyFile),
		TLSServerName: sb.TLSServerName, TLSInsecureSkipVerify: sb.TLSInsecureSkipVerify, ProxyURL: sb.ProxyURL,
		Disabled: sb.Disabled, LegacySession: sb.LegacySession, Registry: sb.Registry,
		Origin: Origin{Scope: scope, File: path, Range: b.DefRange},
	}
	ds := &decodedServer{Server: s, nameRange: b.LabelRanges[0], defRange: b.DefRange, attrs: attrs}
	if a := attrs["transport"]; a != nil && !slices.Contains(transports, s.Transport) {
		diags = append(diags, errorf(a.Expr.Range().Ptr(), "Unknown transport",
			"Transport %q is not available. Available transports: %s.", s.Transport, strings.Join(transports, ", ")))
	}
	if a := attrs["headers_helper"]; a != nil {
		diags = append(diags, decodeHeadersHelper(s, hcl.StaticExpr(sb.HeadersHelper, a.Expr.Range()), diags.HasErrors())...)
	}
	// A directory or program given by a relative path is relative to the
	// file that declares it (base), not to the working directory: the file
	// works wherever mcphost runs. A relative command is relative to cwd
	// when there is one (as exec runs it). A bare program name is looked
	// up in PATH.
	if !FromEnv(s.Cwd) {
		s.Cwd = resolveIn(base, s.Cwd)
	}
	if !FromEnv(s.EnvFile) {
		s.EnvFile = resolveIn(base, s.EnvFile)
	}
	cmdBase := base
	if s.Cwd != "" && !FromEnv(s.Cwd) {
		cmdBase = s.Cwd
	}
	s.Command = resolveProgram(cmdBase, s.Command)
	if len(s.HeadersHelper) > 0 {
		s.HeadersHelper[0] = resolveProgram(base, s.HeadersHelper[0])
	}

	for i, tb := range sb.Tools {
		if i > 0 {
			diags = append(diags, errorf(&tb.DefRange, "Duplicate tools block", "A server has at most one tools block; the first is at %s.", sb.Tools[0].DefRange))
			continue
		}
		f, d := tb.filter(diags.HasErrors())
		diags = append(diags, d...)
		s.Tools = f
	}
	for i, ob := range sb.OAuth {
		if i > 0 {
			diags = append(diags, errorf(&ob.DefRange, "Duplicate oauth block", "A server has at most one oauth block; the first is at %s.", sb.OAuth[0].DefRange))
			continue
		}
		ds.oauthRange = ob.DefRange.Ptr()
		o, d := decodeOAuth(ob.Body, ob.DefRange, path, ctx)
		diags = append(diags, d...)
		if o != nil && o.Grant == GrantTokenExchange && scope == ScopeProject {
			diags = append(diags, errorf(&ob.DefRange, "token_exchange in a project file", "A project's configuration cannot send the gateway users' tokens to an authorization server of its choosing; configure token_exchange in the user or managed configuration."))
		}
		s.OAuth = o
	}
	var auth *authBlock
	for i, ab := range sb.Auth {
		if i > 0 {
			diags = append(diags, errorf(&ab.DefRange, "Duplicate auth block", "A server has at most one auth block; the first is at %s.", sb.Auth[0].DefRange))
			continue
		}
		auth = ab
		diags = append(diags, decodeAuth(s, ab, scope, ctx)...)
	}
	if a := attrs["transport_options"]; a != nil {
		v := sb.TransportOptions
		if !v.Type().IsObjectType() && !v.Type().IsMapType() {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid transport_options", "transport_options must be an object, e.g. { ping_interval = \"10s\" }."))
		} else if b, err := ctyjson.Marshal(v, v.Type()); err != nil {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid transport_options", "%v", err))
		} else {
			s.TransportOptions = b
		}
	}
	if a := attrs["legacy_pool"]; a != nil && sb.LegacyPool != nil {
		diags = append(diags, decodeLegacyPool(s, a, *sb.LegacyPool)...)
	}
	s.ConnectTimeout = parseDuration(attrs["connect_timeout"], sb.ConnectTimeout, &diags)
	s.ToolTimeout = parseDuration(attrs["tool_timeout"], sb.ToolTimeout, &diags)
	s.MaxToolDuration = parseDuration(attrs["max_tool_duration"], sb.MaxToolDuration, &diags)
	checkToolDurations(attrs, s.ToolTimeout, s.MaxToolDuration, &diags)
	if diags.HasErrors() {
		return ds, diags
	}
	ds.auth, ds.optionsAttr = auth, attrs["transport_options"]
	return ds, append(diags, checkServerBlock(ds, scope, written)...)
}

// decodeHeadersHelper sets s.HeadersHelper from headers_helper's value: a
// string is a program without arguments, a list an argv. No shell runs
// it. An empty one is reported only if nothing else was (quiet).
func decodeHeadersHelper(s *Server, expr hcl.Expression, quiet bool) hcl.Diagnostics {
	var diags hcl.Diagnostics
	var one string
	if d := decodeExpr(expr, nil, &one); !d.HasErrors() {
		s.HeadersHelper = []string{one}
	} else if d := decodeExpr(expr, nil, &s.HeadersHelper); d.HasErrors() {
		diags = append(diags, errorf(expr.Range().Ptr(), "Invalid headers_helper",
			"headers_helper is a command: a program path (\"/usr/local/bin/get-token\") or an argv list ([\"get-token\", \"--audience\", \"mcp\"]); it is not run by a shell."))
	}
	if (len(s.HeadersHelper) == 0 || s.HeadersHelper[0] == "") && !quiet && !diags.HasErrors() {
		diags = append(diags, errorf(expr.Range().Ptr(), "Invalid headers_helper", "headers_helper must name a program."))
	}
	return diags
}

// decodeAuth sets the server's auth scheme and configuration from an auth
// "SCHEME" block: the plugin's attributes as a JSON object (AuthConfig),
// and the host's own per_user and inbound_token.
func decodeAuth(s *Server, ab *authBlock, scope Scope, ctx *hcl.EvalContext) hcl.Diagnostics {
	s.AuthScheme = ab.Scheme
	attrs, diags := ab.Body.JustAttributes()
	vals := map[string]cty.Value{}
	for name, a := range attrs {
		v, d := a.Expr.Value(ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		switch name {
		case "per_user", "inbound_token": // the host's, not the plugin's
			if v.Type() != cty.Bool || v.IsNull() {
				diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid "+name, "%s must be true or false.", name))
			} else if name == "per_user" {
				s.AuthPerUser = v.True()
			} else {
				s.AuthInboundToken = v.True()
			}
		default:
			vals[name] = v
		}
	}
	if a, ok := attrs["inbound_token"]; ok && s.AuthInboundToken && !s.AuthPerUser {
		diags = append(diags, errorf(a.Expr.Range().Ptr(), "inbound_token without per_user", "inbound_token gives the auth plugin each gateway user's inbound token: set per_user = true too."))
	}
	if a, ok := attrs["inbound_token"]; ok && s.AuthInboundToken && scope == ScopeProject {
		diags = append(diags, errorf(a.Expr.Range().Ptr(), "inbound_token in a project file", "A project's configuration cannot give a plugin the gateway users' tokens; set inbound_token in the user or managed configuration."))
	}
	obj := cty.ObjectVal(vals)
	if b, err := ctyjson.Marshal(obj, obj.Type()); err == nil {
		s.AuthConfig = b
	}
	return diags
}

// pluginSchema lists the attributes of a plugin block.
var pluginSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "path", Required: true},
		{Name: "sha256"},
	},
}

// decodePlugin decodes a plugin block; a relative path is relative to the file.
func decodePlugin(b *hcl.Block, path string, scope Scope, ctx *hcl.EvalContext) (*Plugin, hcl.Diagnostics) {
	name := b.Labels[0]
	var diags hcl.Diagnostics
	if !ValidServerName(name) {
		diags = append(diags, errorf(&b.LabelRanges[0], "Invalid plugin name",
			"Plugin name %q is not allowed: use letters and digits, optionally joined by single '-' or '_'.", name))
	}
	content, d := b.Body.Content(pluginSchema)
	diags = append(diags, explainUnsupported(d, pluginSchema)...)
	p := &Plugin{Name: name, Origin: Origin{Scope: scope, File: path, Range: b.DefRange}}
	if a := content.Attributes["path"]; a != nil {
		diags = append(diags, decodeExpr(a.Expr, ctx, &p.Path)...)
		p.Path = resolvePath(path, p.Path)
	}
	if a := content.Attributes["sha256"]; a != nil {
		diags = append(diags, decodeExpr(a.Expr, ctx, &p.SHA256)...)
		if !validSHA256(p.SHA256) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid checksum",
				"sha256 must be 64 hexadecimal digits (as `sha256sum` prints them), got %q.", p.SHA256))
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return p, diags
}

// resolveProgram makes a program given by a relative path ("./bin/server",
// "tools/run") absolute, relative to dir; a bare name ("npx") stays a name,
// looked up in PATH when run, and a value that shows an unevaluated env()
// call (a project server before approval) stays as written.
func resolveProgram(dir, p string) string {
	if FromEnv(p) || !strings.ContainsAny(p, `/\`) {
		return p
	}
	return resolveIn(dir, p)
}

// resolveIn makes p absolute, relative to dir.
func resolveIn(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// resolvePath makes p absolute, relative to the directory of the file that declares it.
func resolvePath(file, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(file), p)
}

// MaxLegacyPool bounds legacy_pool: each second session of a stdio server is
// a process.
const MaxLegacyPool = 32

// decodeLegacyPool sets s.LegacyPool from legacy_pool = n (attribute a).
func decodeLegacyPool(s *Server, a *hcl.Attribute, n int) hcl.Diagnostics {
	r := a.Expr.Range().Ptr()
	switch {
	case n < 1 || n > MaxLegacyPool:
		return hcl.Diagnostics{errorf(r, "Invalid legacy_pool",
			"legacy_pool must be between 1 and %d (the most second sessions of the server at once; default %d), not %d.", MaxLegacyPool, DefaultLegacyPool, n)}
	}
	s.LegacyPool = n
	switch {
	case !s.LegacySessionOn():
		return hcl.Diagnostics{warnf(r, "legacy_pool has no effect",
			"legacy_pool bounds the second sessions of legacy_session, which is false for this server.")}
	case s.Transport == TransportHTTP:
		return hcl.Diagnostics{warnf(r, "legacy_pool has no effect",
			"Over streamable HTTP the server's requests during a call are tied to it, so one second session serves every client at once; legacy_pool bounds those of servers on their own pipe (stdio, plugin, sse).")}
	}
	return nil
}
