package config

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agext/levenshtein"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Block and attribute schemas of a configuration file.
var (
	fileSchema = &hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{
			{Type: "server", LabelNames: []string{"name"}},
			{Type: "settings"},
			{Type: "plugin", LabelNames: []string{"name"}},
			{Type: "permissions"},
			{Type: "policy"},
			{Type: "idp", LabelNames: []string{"name"}},
			{Type: "gateway"},
			{Type: "audit"},
		},
	}
	serverSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "transport"},
			{Name: "command"},
			{Name: "args"},
			{Name: "env"},
			{Name: "inherit_env"},
			{Name: "cwd"},
			{Name: "url"},
			{Name: "headers"},
			{Name: "headers_helper"},
			{Name: "disabled"},
			{Name: "connect_timeout"},
			{Name: "tool_timeout"},
			{Name: "max_tool_duration"},
			{Name: "ca_file"},
			{Name: "client_cert_file"},
			{Name: "client_key_file"},
			{Name: "tls_server_name"},
			{Name: "tls_insecure_skip_verify"},
			{Name: "proxy_url"},
			{Name: "transport_options"},
			{Name: "legacy_session"},
		},
		Blocks: []hcl.BlockHeaderSchema{{Type: "auth", LabelNames: []string{"scheme"}}, {Type: "oauth"}, {Type: "tools"}},
	}
	policySchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "allowed_servers"}, {Name: "denied_servers"}},
	}
	permissionsSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "allow"}, {Name: "ask"}, {Name: "deny"}, {Name: "default_mode"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "for_principals"}},
	}
	forPrincipalsSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "groups"}, {Name: "subjects"}},
	}
	pluginSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "path", Required: true},
			{Name: "sha256"},
		},
	}
	settingsSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "connect_timeout"},
			{Name: "tool_timeout"},
			{Name: "max_tool_duration"},
			{Name: "connect_concurrency_local"},
			{Name: "connect_concurrency_remote"},
			{Name: "output_dir"},
			{Name: "max_concurrent_calls"},
			{Name: "max_message_bytes"},
			{Name: "approve_all_project_servers"},
			{Name: "approved_project_servers"},
			{Name: "plugin_dir"},
			{Name: "plugin_lock"},
			{Name: "session_idle_timeout"},
			{Name: "max_sessions"},
			{Name: "drain_timeout"},
			{Name: "naming"},
			{Name: "protocol_version"},
		},
	}
)

// MaxServerNameLen bounds a server name so that tool names keep room for the tool.
const MaxServerNameLen = 40

var (
	serverNameRE = regexp.MustCompile(`^[A-Za-z0-9]+([_-][A-Za-z0-9]+)*$`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// ValidEnvName reports whether name can name an environment variable in
// env, inherit_env and env(): a letter or '_', then letters, digits, '_'.
func ValidEnvName(name string) bool { return envNameRE.MatchString(name) }

// ValidServerName reports whether name is allowed as a server name: letters and
// digits, single '-' or '_' between them, at most MaxServerNameLen characters.
// The rule keeps tool names (mcp__SERVER__TOOL) unambiguous.
func ValidServerName(name string) bool {
	return len(name) <= MaxServerNameLen && serverNameRE.MatchString(name)
}

// decodedServer is a server block plus the ranges validation needs.
type decodedServer struct {
	*Server
	nameRange   hcl.Range
	optionsAttr *hcl.Attribute // transport_options, checked against the plugin's schema
	authBlock   *hcl.Block     // auth "SCHEME" { … }, checked against the plugin's schema
}

// partialSettings holds the settings one file sets (nil = not set there).
type partialSettings struct {
	connectTimeout, toolTimeout         *time.Duration
	maxToolDuration                     *time.Duration
	concurrencyLocal, concurrencyRemote *int
	maxCalls, maxMessage                *int
	outputDir                           *string
	pluginDir, pluginLock               *string
	approveAll                          *bool
	defRange                            hcl.Range
	approved                            map[string]string
	sessionIdle, drain                  *time.Duration
	maxSessions                         *int
	naming                              *string
	protocolVersion                     *string
	// set lists the attributes the block sets, in source order, for the
	// warnings of a project-scope settings block (which is ignored).
	set []*hcl.Attribute
}

type decodedFile struct {
	path  string
	scope Scope
	// base is the directory relative program paths and cwd of its server
	// blocks are relative to: the file's own, but for the local scope (a
	// file kept in the config directory, about a project) the project's
	// root.
	base         string
	serverBlocks []*hcl.Block
	servers      []*decodedServer
	plugins      []*Plugin
	idps         []*IdP
	settings     *partialSettings
	rules        []PermissionRule
	allowed      []*ServerMatcher
	denied       []*ServerMatcher
	hasAllowList bool
	mode         string
	modeRange    hcl.Range
	gateway      *Gateway
	audit        *Audit
	// gatewayRange and auditRange are where those blocks are (the first
	// of each), also in a project file, whose blocks are not decoded.
	gatewayRange, auditRange *hcl.Range
}

// decodeFile decodes one parsed file's settings and plugin blocks and
// collects its server blocks; decodeServers decodes those once the available
// transports are known.
func decodeFile(f *hcl.File, path string, scope Scope, ctx *hcl.EvalContext) (*decodedFile, hcl.Diagnostics) {
	out := &decodedFile{path: path, scope: scope, base: filepath.Dir(path)}
	content, diags := f.Body.Content(fileSchema)
	diags = explainUnsupported(diags, fileSchema)
	seenPlugins := map[string]hcl.Range{}
	for _, b := range content.Blocks {
		switch b.Type {
		case "server":
			out.serverBlocks = append(out.serverBlocks, b)
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
		case "permissions":
			diags = append(diags, decodePermissions(b, out, ctx)...)
		case "gateway", "audit":
			first := &out.gatewayRange
			if b.Type == "audit" {
				first = &out.auditRange
			}
			if *first != nil {
				diags = append(diags, errorf(&b.DefRange, "Duplicate "+b.Type+" block",
					"Only one %s block is allowed per file; the first is at %s.", b.Type, *first))
				continue
			}
			*first = b.DefRange.Ptr()
			if scope == ScopeProject {
				continue // not honoured (mergeGateway warns), so not evaluated
			}
			var d hcl.Diagnostics
			if b.Type == "gateway" {
				out.gateway, d = decodeGateway(b, path, scope, ctx)
			} else {
				out.audit, d = decodeAudit(b, path, scope, ctx)
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
					"Only one settings block is allowed per file; the first is at %s.", out.settings.firstRange()))
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
		if df.scope == ScopeProject {
			s, d = decode(b, writtenContext(), true)
			d = append(d, checkWritten(b.Body)...)
			if !d.HasErrors() {
				h := s.approvalHash()
				written := *s.Server
				if cfg.Settings.ApproveAllProjectServers || cfg.Settings.ApprovedProjectServers[s.Name] == h {
					s, d = decode(b, ctx, false)
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

// checkServer checks a decoded server against what the locked plugins
// provide: its auth block, its idp reference and its transport options.
func checkServer(cfg *Config, ds *decodedServer, ctx *hcl.EvalContext, unlocked []string) hcl.Diagnostics {
	var d hcl.Diagnostics
	if ds.authBlock != nil {
		d = append(d, checkAuth(cfg, ds, ctx, unlocked)...)
		d = append(d, checkIdPRef(cfg, ds, ctx)...)
	}
	if ds.optionsAttr != nil {
		if p := cfg.PluginFor(ds.Transport); p != nil {
			if c := p.Locked.Component("transport", ds.Transport); c != nil {
				d = append(d, checkOptions(ds.optionsAttr, ctx, c, fmt.Sprintf("%s transport (plugin %s)", ds.Transport, p.Name))...)
			}
		}
	}
	return d
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

func (p *partialSettings) firstRange() hcl.Range { return p.defRange }

// decodeServer decodes a server block; written says ctx is writtenContext
// (env() calls kept as written, for a project server before approval).
func decodeServer(b *hcl.Block, path, base string, scope Scope, ctx *hcl.EvalContext, transports []string, written bool) (*decodedServer, hcl.Diagnostics) {
	name := b.Labels[0]
	var diags hcl.Diagnostics
	if !ValidServerName(name) {
		diags = append(diags, errorf(&b.LabelRanges[0], "Invalid server name",
			"Server name %q is not allowed: use letters and digits, optionally joined by single '-' or '_' (e.g. \"github\", \"my-server\"), at most %d characters.", name, MaxServerNameLen))
	}
	content, d := b.Body.Content(serverSchema)
	diags = append(diags, explainUnsupported(d, serverSchema)...)
	attrs := content.Attributes

	s := &Server{Name: name, Transport: TransportStdio, Origin: Origin{Scope: scope, File: path, Range: b.DefRange}}
	decode := func(attrName string, dst any) *hcl.Attribute {
		a, ok := attrs[attrName]
		if !ok {
			return nil
		}
		diags = append(diags, decodeExpr(a.Expr, ctx, dst)...)
		return a
	}
	if a := decode("transport", &s.Transport); a != nil && !slices.Contains(transports, s.Transport) {
		diags = append(diags, errorf(a.Expr.Range().Ptr(), "Unknown transport",
			"Transport %q is not available. Available transports: %s.", s.Transport, strings.Join(transports, ", ")))
	}
	decode("command", &s.Command)
	decode("args", &s.Args)
	decode("env", &s.Env)
	decode("inherit_env", &s.InheritEnv)
	decode("cwd", &s.Cwd)
	urlAttr := decode("url", &s.URL)
	decode("headers", &s.Headers)
	if a, ok := attrs["headers_helper"]; ok {
		// A string is a program without arguments; a list is an argv. No shell.
		var one string
		if d := decodeExpr(a.Expr, ctx, &one); !d.HasErrors() {
			s.HeadersHelper = []string{one}
		} else if d := decodeExpr(a.Expr, ctx, &s.HeadersHelper); d.HasErrors() {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid headers_helper",
				"headers_helper is a command: a program path (\"/usr/local/bin/get-token\") or an argv list ([\"get-token\", \"--audience\", \"mcp\"]); it is not run by a shell."))
		}
		if len(s.HeadersHelper) == 0 || s.HeadersHelper[0] == "" {
			if !diags.HasErrors() {
				diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid headers_helper", "headers_helper must name a program."))
			}
		}
	}
	// A directory or program given by a relative path is relative to the
	// file that declares it (base), not to the working directory: the file
	// works wherever mcphost runs. A relative command is relative to cwd
	// when there is one (as exec runs it). A bare program name is looked
	// up in PATH.
	if !FromEnv(s.Cwd) {
		s.Cwd = resolveIn(base, s.Cwd)
	}
	cmdBase := base
	if s.Cwd != "" && !FromEnv(s.Cwd) {
		cmdBase = s.Cwd
	}
	s.Command = resolveProgram(cmdBase, s.Command)
	if len(s.HeadersHelper) > 0 {
		s.HeadersHelper[0] = resolveProgram(base, s.HeadersHelper[0])
	}
	decode("disabled", &s.Disabled)
	decode("legacy_session", &s.LegacySession)
	decode("tls_server_name", &s.TLSServerName)
	decode("tls_insecure_skip_verify", &s.TLSInsecureSkipVerify)
	decode("proxy_url", &s.ProxyURL)
	optionsAttr := attrs["transport_options"]
	var authBlock, oauthBlock, toolsBlock *hcl.Block
	for _, blk := range content.Blocks {
		if blk.Type == "tools" {
			if toolsBlock != nil {
				diags = append(diags, errorf(&blk.DefRange, "Duplicate tools block", "A server has at most one tools block; the first is at %s.", toolsBlock.DefRange))
				continue
			}
			toolsBlock = blk
			f, d := decodeToolFilter(blk, ctx)
			diags = append(diags, d...)
			s.Tools = f
			continue
		}
		if blk.Type == "oauth" {
			if oauthBlock != nil {
				diags = append(diags, errorf(&blk.DefRange, "Duplicate oauth block", "A server has at most one oauth block; the first is at %s.", oauthBlock.DefRange))
				continue
			}
			oauthBlock = blk
			o, d := decodeOAuth(blk, path, ctx)
			diags = append(diags, d...)
			if o != nil && o.Grant == GrantTokenExchange && scope == ScopeProject {
				diags = append(diags, errorf(&blk.DefRange, "token_exchange in a project file", "A project's configuration cannot send the gateway users' tokens to an authorization server of its choosing; configure token_exchange in the user or managed configuration."))
			}
			s.OAuth = o
			continue
		}
		if authBlock != nil {
			diags = append(diags, errorf(&blk.DefRange, "Duplicate auth block", "A server has at most one auth block; the first is at %s.", authBlock.DefRange))
			continue
		}
		authBlock = blk
		s.AuthScheme = blk.Labels[0]
		battrs, d := blk.Body.JustAttributes()
		diags = append(diags, d...)
		vals := map[string]cty.Value{}
		for name, a := range battrs {
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
		if a, ok := battrs["inbound_token"]; ok && s.AuthInboundToken && !s.AuthPerUser {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "inbound_token without per_user", "inbound_token gives the auth plugin each gateway user's inbound token: set per_user = true too."))
		}
		if a, ok := battrs["inbound_token"]; ok && s.AuthInboundToken && scope == ScopeProject {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "inbound_token in a project file", "A project's configuration cannot give a plugin the gateway users' tokens; set inbound_token in the user or managed configuration."))
		}
		obj := cty.ObjectVal(vals)
		if b, err := ctyjson.Marshal(obj, obj.Type()); err == nil {
			s.AuthConfig = b
		}
	}
	if a, ok := attrs["transport_options"]; ok {
		v, d := a.Expr.Value(ctx)
		diags = append(diags, d...)
		if !d.HasErrors() {
			if !v.Type().IsObjectType() && !v.Type().IsMapType() {
				diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid transport_options", "transport_options must be an object, e.g. { ping_interval = \"10s\" }."))
			} else if b, err := ctyjson.Marshal(v, v.Type()); err != nil {
				diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid transport_options", "%v", err))
			} else {
				s.TransportOptions = b
			}
		}
	}
	for attrName, dst := range map[string]*string{"ca_file": &s.CAFile, "client_cert_file": &s.ClientCertFile, "client_key_file": &s.ClientKeyFile} {
		if decode(attrName, dst) != nil {
			*dst = resolvePath(path, *dst)
		}
	}
	s.ConnectTimeout = decodeDuration(attrs["connect_timeout"], ctx, &diags)
	s.ToolTimeout = decodeDuration(attrs["tool_timeout"], ctx, &diags)
	s.MaxToolDuration = decodeDuration(attrs["max_tool_duration"], ctx, &diags)
	checkToolDurations(attrs, s.ToolTimeout, s.MaxToolDuration, &diags)
	if diags.HasErrors() {
		return &decodedServer{Server: s, nameRange: b.LabelRanges[0]}, diags
	}

	notFor := func(attrName, transport, use string) {
		if a, ok := attrs[attrName]; ok {
			diags = append(diags, errorf(&a.NameRange, "Argument not valid for this transport",
				"%q is not used by the %s transport; %s.", attrName, transport, use))
		}
	}
	if s.Transport == TransportStdio {
		if strings.TrimSpace(s.Command) == "" {
			r := b.DefRange
			if a, ok := attrs["command"]; ok {
				r = a.Expr.Range()
			}
			diags = append(diags, errorf(&r, "Missing command",
				"A stdio server needs a command, e.g. command = \"npx\" and args = [\"-y\", \"@modelcontextprotocol/server-everything\"]. For a remote server set transport = \"http\" or \"sse\" and a url."))
		}
		for _, a := range []string{"url", "headers", "headers_helper", "ca_file", "client_cert_file", "client_key_file", "tls_server_name", "tls_insecure_skip_verify", "proxy_url", "transport_options"} {
			notFor(a, s.Transport, "it applies to remote transports (http, sse, or a plugin transport)")
		}
		for k := range s.Env {
			if !envNameRE.MatchString(k) {
				diags = append(diags, errorf(attrs["env"].Expr.Range().Ptr(), "Invalid environment variable name",
					"%q is not a valid environment variable name (letters, digits and '_', not starting with a digit).", k))
			}
		}
		for _, k := range s.InheritEnv {
			if !envNameRE.MatchString(k) {
				diags = append(diags, errorf(attrs["inherit_env"].Expr.Range().Ptr(), "Invalid environment variable name",
					"%q is not a valid environment variable name (letters, digits and '_', not starting with a digit).", k))
			}
		}
	} else {
		for _, a := range []string{"command", "args", "env", "inherit_env", "cwd"} {
			notFor(a, s.Transport, "it applies to the stdio transport")
		}
		if urlAttr == nil {
			diags = append(diags, errorf(&b.DefRange, "Missing url",
				"A %s server needs a url, e.g. url = \"https://example.com/mcp\".", s.Transport))
		} else if msg := checkURL(s.Transport, s.URL); msg != "" && !(written && FromEnv(s.URL)) {
			diags = append(diags, errorf(urlAttr.Expr.Range().Ptr(), "Invalid url", "%s", msg))
		}
		if (s.ClientCertFile == "") != (s.ClientKeyFile == "") {
			diags = append(diags, errorf(&b.DefRange, "Incomplete client certificate",
				"client_cert_file and client_key_file go together: set both for mutual TLS, or neither."))
		}
		if s.Transport == TransportHTTP || s.Transport == TransportSSE {
			for _, a := range []string{"transport_options"} {
				notFor(a, s.Transport, "it passes options to a plugin transport")
			}
		}
		for k := range s.Headers {
			if !headerNameRE.MatchString(k) {
				diags = append(diags, errorf(attrs["headers"].Expr.Range().Ptr(), "Invalid header name",
					"%q is not a valid HTTP header name.", k))
			}
		}
	}
	if scope == ScopeProject {
		// A project may tighten, never relax, a guard.
		if a, ok := attrs["tls_insecure_skip_verify"]; ok && s.TLSInsecureSkipVerify {
			diags = append(diags, warnf(&a.NameRange, "Ignored in project scope",
				"tls_insecure_skip_verify turns off certificate checks, so a project file cannot set it; give the server's CA with ca_file, or set it in your local scope."))
			s.TLSInsecureSkipVerify = false
		}
		if s.OAuth != nil && s.OAuth.AllowLoopback {
			diags = append(diags, warnf(&oauthBlock.DefRange, "Ignored in project scope",
				"allow_loopback turns off the OAuth SSRF guard for loopback addresses, so a project file cannot set it; set it in your local scope."))
			s.OAuth.AllowLoopback = false
		}
	}
	if oauthBlock != nil && authBlock != nil {
		diags = append(diags, errorf(&oauthBlock.DefRange, "Two credential sources", "A server uses the built-in oauth block or an auth plugin (auth %q at %s), not both.", authBlock.Labels[0], authBlock.DefRange))
	}
	if oauthBlock != nil && s.Transport != TransportHTTP && s.Transport != TransportSSE {
		diags = append(diags, errorf(&oauthBlock.DefRange, "OAuth not valid for this transport", "The built-in oauth block applies to the http and sse transports; a plugin transport gets credentials from an auth plugin (auth \"SCHEME\" { … })."))
	}
	if authBlock != nil && !s.IsRemote() {
		diags = append(diags, errorf(&authBlock.DefRange, "Auth not valid for this transport", "An auth block applies to remote transports (http, sse, or a plugin transport), not to stdio."))
	}
	return &decodedServer{Server: s, nameRange: b.LabelRanges[0], optionsAttr: optionsAttr, authBlock: authBlock}, diags
}

// optionPair is one configured option: its key, where the key is, and its value.
type optionPair struct {
	key      string
	keyRange hcl.Range
	value    hcl.Expression
}

// authPairs lists an auth block's attributes as option pairs.
func authPairs(b *hcl.Block) []optionPair {
	attrs, _ := b.Body.JustAttributes()
	var out []optionPair
	for name, a := range attrs {
		if name == "per_user" || name == "inbound_token" {
			continue // the host's attributes, in every auth block
		}
		out = append(out, optionPair{name, a.NameRange, a.Expr})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].keyRange.Start.Byte < out[j].keyRange.Start.Byte })
	return out
}

// checkOptions checks an options object against a plugin component's schema.
func checkOptions(attr *hcl.Attribute, ctx *hcl.EvalContext, c *LockedComponent, what string) hcl.Diagnostics {
	pairs, d := hcl.ExprMap(attr.Expr)
	if d.HasErrors() {
		return nil // not an object literal: the plugin checks it when it opens
	}
	var ps []optionPair
	for _, kv := range pairs {
		key := hcl.ExprAsKeyword(kv.Key)
		if key == "" && decodeExpr(kv.Key, ctx, &key).HasErrors() {
			continue
		}
		ps = append(ps, optionPair{key, kv.Key.Range(), kv.Value})
	}
	return checkPairs(ps, attr.Expr.Range(), ctx, c, what)
}

// checkPairs checks configured options against a component's schema: every
// key known, every value of its type, every required key present (reported
// at whole, the range of the whole object or block).
func checkPairs(pairs []optionPair, whole hcl.Range, ctx *hcl.EvalContext, c *LockedComponent, what string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	var allowed []string
	for _, a := range c.Attributes {
		allowed = append(allowed, a.Name)
	}
	seen := map[string]bool{}
	for _, kv := range pairs {
		key := kv.key
		seen[key] = true
		var spec *LockedAttribute
		for _, a := range c.Attributes {
			if a.Name == key {
				spec = a
			}
		}
		if spec == nil {
			detail := fmt.Sprintf("The %s does not take %q.", what, key)
			if len(allowed) > 0 {
				detail += " Allowed: " + strings.Join(allowed, ", ") + "."
			} else {
				detail += " It takes no options."
			}
			if s := suggest(key, allowed); s != "" {
				detail += fmt.Sprintf(" Did you mean %q?", s)
			}
			r := kv.keyRange
			diags = append(diags, errorf(&r, "Unsupported option", "%s", detail))
			continue
		}
		v, vd := kv.value.Value(ctx)
		if vd.HasErrors() || !v.IsKnown() || v.IsNull() {
			continue
		}
		if !typeMatches(v.Type(), spec.Type) {
			diags = append(diags, errorf(kv.value.Range().Ptr(), "Wrong option type",
				"Option %q of the %s must be a %s, got %s.", key, what, spec.Type, v.Type().FriendlyName()))
		}
	}
	for _, a := range c.Attributes {
		if a.Required && !seen[a.Name] {
			diags = append(diags, errorf(&whole, "Missing option", "The %s requires option %q.", what, a.Name))
		}
	}
	return diags
}

func typeMatches(t cty.Type, want string) bool {
	elemsAreStrings := func() bool {
		switch {
		case t.IsListType(), t.IsSetType(), t.IsMapType():
			return t.ElementType() == cty.String
		case t.IsTupleType():
			for _, e := range t.TupleElementTypes() {
				if e != cty.String {
					return false
				}
			}
			return true
		case t.IsObjectType():
			for _, e := range t.AttributeTypes() {
				if e != cty.String {
					return false
				}
			}
			return true
		}
		return false
	}
	switch want {
	case "string":
		return t == cty.String
	case "number":
		return t == cty.Number
	case "bool":
		return t == cty.Bool
	case "list(string)":
		return (t.IsListType() || t.IsSetType() || t.IsTupleType()) && elemsAreStrings()
	case "map(string)":
		return (t.IsMapType() || t.IsObjectType()) && elemsAreStrings()
	}
	return true
}

// checkURL validates a remote server URL for its transport; "" means valid.
func checkURL(transport, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("%q is not a URL: %v.", raw, err)
	}
	allowed := []string{"http", "https"}
	if transport != TransportHTTP && transport != TransportSSE {
		allowed = []string{"ws", "wss", "http", "https"} // plugin transports choose for themselves
	}
	if !slices.Contains(allowed, u.Scheme) {
		return fmt.Sprintf("%q has scheme %q; the %s transport accepts %s.", raw, u.Scheme, transport, strings.Join(allowed, ", "))
	}
	if u.Host == "" {
		return fmt.Sprintf("%q has no host.", raw)
	}
	if u.User != nil {
		return "credentials in the url are not allowed; use headers or an auth block."
	}
	return ""
}

// checkToolDurations reports a max_tool_duration shorter than the
// tool_timeout of the same block: the cap would make the timeout meaningless.
func checkToolDurations(attrs hcl.Attributes, timeout, max time.Duration, diags *hcl.Diagnostics) {
	if timeout <= 0 || max <= 0 || max >= timeout {
		return
	}
	*diags = append(*diags, errorf(attrs["max_tool_duration"].Expr.Range().Ptr(), "Invalid max_tool_duration",
		"max_tool_duration (%s) is shorter than tool_timeout (%s); it is the cap on a whole call, which progress notifications cannot extend, so it must be at least tool_timeout.", max, timeout))
}

func decodeDuration(a *hcl.Attribute, ctx *hcl.EvalContext, diags *hcl.Diagnostics) time.Duration {
	if a == nil {
		return 0
	}
	var s string
	if d := decodeExpr(a.Expr, ctx, &s); d.HasErrors() {
		*diags = append(*diags, d...)
		return 0
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		*diags = append(*diags, errorf(a.Expr.Range().Ptr(), "Invalid duration",
			"%q is not a positive duration; write a number with a unit, e.g. \"30s\", \"2m\", \"1h30m\".", s))
		return 0
	}
	return v
}

func decodeSettings(b *hcl.Block, ctx *hcl.EvalContext) (*partialSettings, hcl.Diagnostics) {
	content, diags := b.Body.Content(settingsSchema)
	diags = explainUnsupported(diags, settingsSchema)
	attrs := content.Attributes
	p := &partialSettings{defRange: b.DefRange}
	for _, a := range attrs {
		p.set = append(p.set, a)
	}
	sort.Slice(p.set, func(i, j int) bool { return p.set[i].NameRange.Start.Byte < p.set[j].NameRange.Start.Byte })
	for name, dst := range map[string]**time.Duration{"session_idle_timeout": &p.sessionIdle, "drain_timeout": &p.drain} {
		if a := attrs[name]; a != nil {
			v := decodeDuration(a, ctx, &diags)
			*dst = &v
		}
	}
	if a := attrs["connect_timeout"]; a != nil {
		v := decodeDuration(a, ctx, &diags)
		p.connectTimeout = &v
	}
	if a := attrs["tool_timeout"]; a != nil {
		v := decodeDuration(a, ctx, &diags)
		p.toolTimeout = &v
	}
	if a := attrs["max_tool_duration"]; a != nil {
		v := decodeDuration(a, ctx, &diags)
		p.maxToolDuration = &v
		if p.toolTimeout != nil {
			checkToolDurations(attrs, *p.toolTimeout, v, &diags)
		}
	}
	for _, lim := range []struct {
		name     string
		dst      **int
		min, max int
	}{
		{"connect_concurrency_local", &p.concurrencyLocal, 1, 1000},
		{"connect_concurrency_remote", &p.concurrencyRemote, 1, 1000},
		{"max_concurrent_calls", &p.maxCalls, 1, 10000},
		{"max_message_bytes", &p.maxMessage, 1024, 1 << 30},
		{"max_sessions", &p.maxSessions, 1, 1000000},
	} {
		a := attrs[lim.name]
		if a == nil {
			continue
		}
		var v int
		if d := decodeExpr(a.Expr, ctx, &v); d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		if v < lim.min || v > lim.max {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Value out of range", "%s must be between %d and %d, got %d.", lim.name, lim.min, lim.max, v))
			continue
		}
		*lim.dst = &v
	}
	if a := attrs["output_dir"]; a != nil {
		var v string
		diags = append(diags, decodeExpr(a.Expr, ctx, &v)...)
		p.outputDir = &v
	}
	for name, dst := range map[string]**string{"plugin_dir": &p.pluginDir, "plugin_lock": &p.pluginLock} {
		if a := attrs[name]; a != nil {
			var v string
			diags = append(diags, decodeExpr(a.Expr, ctx, &v)...)
			v = resolvePath(a.Expr.Range().Filename, v)
			*dst = &v
		}
	}
	if a := attrs["naming"]; a != nil {
		var v string
		if d := decodeExpr(a.Expr, ctx, &v); d.HasErrors() {
			diags = append(diags, d...)
		} else if !slices.Contains(NamingModes(), v) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid naming",
				"naming must be one of %s, got %q: prefixed exposes mcp__SERVER__TOOL, conditional drops the prefix while exactly one server is configured, bare always drops it (and refuses collisions).",
				strings.Join(NamingModes(), ", "), v))
		} else {
			p.naming = &v
		}
	}
	if a := attrs["protocol_version"]; a != nil {
		var v string
		if d := decodeExpr(a.Expr, ctx, &v); d.HasErrors() {
			diags = append(diags, d...)
		} else if !slices.Contains(mcp.SupportedProtocolVersions(), v) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid protocol_version",
				"protocol_version must be one of %s, got %q: the protocol version server sessions are opened at (leave it out for the newest both sides speak).",
				strings.Join(mcp.SupportedProtocolVersions(), ", "), v))
		} else {
			p.protocolVersion = &v
		}
	}
	if a := attrs["approve_all_project_servers"]; a != nil {
		var v bool
		diags = append(diags, decodeExpr(a.Expr, ctx, &v)...)
		p.approveAll = &v
	}
	if a := attrs["approved_project_servers"]; a != nil {
		diags = append(diags, decodeExpr(a.Expr, ctx, &p.approved)...)
		for name, h := range p.approved {
			if !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
				diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid approval",
					"The approval for %q must be the \"sha256:<64 hex digits>\" hash that `mcphost config approve %s` writes, got %q.", name, name, h))
			}
		}
	}
	return p, diags
}

// decodeExpr evaluates an expression and decodes its value into dst. An
// evaluation error is reported alone, without a second "unknown value"
// diagnostic from the conversion.
func decodeExpr(expr hcl.Expression, ctx *hcl.EvalContext, dst any) hcl.Diagnostics {
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return diags
	}
	return append(diags, gohcl.DecodeExpression(hcl.StaticExpr(v, expr.Range()), nil, dst)...)
}

var unsupportedRE = regexp.MustCompile(`(?:argument|Blocks of type) (?:named )?"([^"]+)"`)

// explainUnsupported adds a suggestion and the list of what is allowed to
// HCL's "Unsupported argument/block type" diagnostics.
func explainUnsupported(diags hcl.Diagnostics, schema *hcl.BodySchema) hcl.Diagnostics {
	for _, d := range diags {
		var allowed []string
		switch d.Summary {
		case "Unsupported argument":
			for _, a := range schema.Attributes {
				allowed = append(allowed, a.Name)
			}
		case "Unsupported block type":
			for _, b := range schema.Blocks {
				allowed = append(allowed, b.Type)
			}
		default:
			continue
		}
		m := unsupportedRE.FindStringSubmatch(d.Detail)
		if m != nil && !strings.Contains(d.Detail, "Did you mean") {
			if s := suggest(m[1], allowed); s != "" {
				d.Detail += fmt.Sprintf(" Did you mean %q?", s)
			}
		}
		if len(allowed) == 0 {
			d.Detail += " Nothing is allowed here."
		} else {
			d.Detail += " Allowed here: " + strings.Join(allowed, ", ") + "."
		}
	}
	return diags
}

// suggest returns the allowed name closest to given, if it is close enough.
func suggest(given string, allowed []string) string {
	best, bestDist := "", 3
	for _, a := range allowed {
		if d := levenshtein.Distance(given, a, nil); d < bestDist {
			best, bestDist = a, d
		}
	}
	return best
}

func validSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32
}

// decodePermissions decodes a permissions block: pattern lists, each pattern
// validated at its own range, and the default mode.
func decodePermissions(b *hcl.Block, out *decodedFile, ctx *hcl.EvalContext) hcl.Diagnostics {
	content, diags := b.Body.Content(permissionsSchema)
	diags = explainUnsupported(diags, permissionsSchema)
	var who *permissions.Principals
	for i, fb := range content.Blocks {
		if i > 0 {
			diags = append(diags, errorf(&fb.DefRange, "Duplicate for_principals block",
				"A permissions block has at most one for_principals; write another permissions block for other principals."))
			continue
		}
		var d hcl.Diagnostics
		who, d = decodeForPrincipals(fb, ctx)
		diags = append(diags, d...)
		if who == nil {
			return diags // its rules must not apply to everyone
		}
	}
	for _, kind := range []struct {
		attr string
		b    permissions.Behavior
	}{{"deny", permissions.Deny}, {"ask", permissions.Ask}, {"allow", permissions.Allow}} {
		a := content.Attributes[kind.attr]
		if a == nil {
			continue
		}
		elems, d := hcl.ExprList(a.Expr)
		if d.HasErrors() {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid permission list", "%s must be a list of patterns, e.g. [\"mcp__github__*\"].", kind.attr))
			continue
		}
		for _, e := range elems {
			var pattern string
			if d := decodeExpr(e, ctx, &pattern); d.HasErrors() {
				diags = append(diags, d...)
				continue
			}
			rng := e.Range()
			if err := permissions.ValidatePattern(kind.b, pattern); err != nil {
				diags = append(diags, errorf(&rng, "Invalid permission pattern", "%s.", err))
				continue
			}
			out.rules = append(out.rules, PermissionRule{Behavior: kind.b, Pattern: pattern, For: who, Origin: Origin{Scope: out.scope, File: out.path, Range: rng}})
		}
	}
	if a := content.Attributes["default_mode"]; a != nil && who != nil {
		diags = append(diags, errorf(a.NameRange.Ptr(), "default_mode for some principals",
			"default_mode applies to everyone; set it in a permissions block without for_principals."))
	} else if a != nil {
		var mode string
		diags = append(diags, decodeExpr(a.Expr, ctx, &mode)...)
		if !slices.Contains(permissions.Modes, permissions.Mode(mode)) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid default mode", "default_mode %q is not one of ask, allow_all, deny.", mode))
		} else {
			out.mode, out.modeRange = mode, a.Expr.Range()
		}
	}
	return diags
}

// decodeForPrincipals decodes a for_principals block: groups and subjects,
// at least one of them not empty. nil with errors if it is invalid.
func decodeForPrincipals(b *hcl.Block, ctx *hcl.EvalContext) (*permissions.Principals, hcl.Diagnostics) {
	content, diags := b.Body.Content(forPrincipalsSchema)
	diags = explainUnsupported(diags, forPrincipalsSchema)
	p := &permissions.Principals{}
	for name, dst := range map[string]*[]string{"groups": &p.Groups, "subjects": &p.Subjects} {
		if a := content.Attributes[name]; a != nil {
			diags = append(diags, decodeExpr(a.Expr, ctx, dst)...)
			if slices.Contains(*dst, "") {
				diags = append(diags, errorf(a.Expr.Range().Ptr(), "Empty "+name[:len(name)-1], "%s may not contain an empty string.", name))
			}
		}
	}
	if len(p.Groups) == 0 && len(p.Subjects) == 0 && !diags.HasErrors() {
		diags = append(diags, errorf(&b.DefRange, "Empty for_principals",
			"for_principals names whom the block's rules apply to: set groups = [\"eng\"] (the token's groups claim) or subjects = [\"…\"] (its sub claim)."))
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return p, diags
}

// decodePolicy decodes the managed server policy. Each entry is an object with
// exactly one of name, url (a wildcard pattern) or command (argv, each
// element a wildcard pattern).
func decodePolicy(b *hcl.Block, out *decodedFile, ctx *hcl.EvalContext) hcl.Diagnostics {
	content, diags := b.Body.Content(policySchema)
	diags = explainUnsupported(diags, policySchema)
	for _, list := range []struct {
		attr string
		dst  *[]*ServerMatcher
	}{{"allowed_servers", &out.allowed}, {"denied_servers", &out.denied}} {
		a := content.Attributes[list.attr]
		if a == nil {
			continue
		}
		if list.attr == "allowed_servers" {
			out.hasAllowList = true
		}
		elems, d := hcl.ExprList(a.Expr)
		if d.HasErrors() {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid server policy", "%s must be a list of entries like { name = \"github\" }, { url = \"https://*.corp.example/*\" } or { command = [\"npx\", \"-y\", \"@corp/mcp-*\"] }.", list.attr))
			continue
		}
		for _, e := range elems {
			v, d := e.Value(ctx)
			rng := e.Range()
			if d.HasErrors() {
				diags = append(diags, d...)
				continue
			}
			if !v.Type().IsObjectType() {
				diags = append(diags, errorf(&rng, "Invalid server policy entry", "An entry is an object with one of name, url or command."))
				continue
			}
			sm := &ServerMatcher{Origin: Origin{Scope: out.scope, File: out.path, Range: rng}}
			n := 0
			for attr := range v.Type().AttributeTypes() {
				switch attr {
				case "name":
					diags = append(diags, decodeExpr(hcl.StaticExpr(v.GetAttr("name"), rng), nil, &sm.Name)...)
					n++
				case "url":
					diags = append(diags, decodeExpr(hcl.StaticExpr(v.GetAttr("url"), rng), nil, &sm.URL)...)
					n++
				case "command":
					diags = append(diags, decodeExpr(hcl.StaticExpr(v.GetAttr("command"), rng), nil, &sm.Command)...)
					n++
				default:
					diags = append(diags, errorf(&rng, "Invalid server policy entry", "%q is not allowed in a policy entry; use name, url or command.", attr))
				}
			}
			if n != 1 {
				diags = append(diags, errorf(&rng, "Invalid server policy entry", "An entry names exactly one of name, url or command."))
				continue
			}
			*list.dst = append(*list.dst, sm)
		}
	}
	return diags
}
