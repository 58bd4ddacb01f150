package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
)

// Block and attribute schemas of a configuration file.
var (
	fileSchema = &hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{
			{Type: "server", LabelNames: []string{"name"}},
			{Type: "settings"},
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
		},
	}
	settingsSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "connect_timeout"},
			{Name: "tool_timeout"},
			{Name: "connect_concurrency_local"},
			{Name: "connect_concurrency_remote"},
			{Name: "output_dir"},
			{Name: "max_concurrent_calls"},
			{Name: "max_message_bytes"},
			{Name: "approve_all_project_servers"},
			{Name: "approved_project_servers"},
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

// ValidServerName reports whether name is allowed as a server name: letters and
// digits, single '-' or '_' between them, at most MaxServerNameLen characters.
// The rule keeps tool names (mcp__SERVER__TOOL) unambiguous.
func ValidServerName(name string) bool {
	return len(name) <= MaxServerNameLen && serverNameRE.MatchString(name)
}

// decodedServer is a server block plus the ranges validation needs.
type decodedServer struct {
	*Server
	nameRange hcl.Range
}

// partialSettings holds the settings one file sets (nil = not set there).
type partialSettings struct {
	connectTimeout, toolTimeout         *time.Duration
	concurrencyLocal, concurrencyRemote *int
	maxCalls, maxMessage                *int
	outputDir                           *string
	approveAll                          *bool
	defRange                            hcl.Range
	approveAllRange                     hcl.Range
	approved                            map[string]string
	approvedRange                       hcl.Range
}

type decodedFile struct {
	path     string
	scope    Scope
	servers  []*decodedServer
	settings *partialSettings
}

// decodeFile decodes one parsed file. transports lists the allowed transport
// names (built-in and plugin-provided).
func decodeFile(f *hcl.File, path string, scope Scope, ctx *hcl.EvalContext, transports []string) (*decodedFile, hcl.Diagnostics) {
	out := &decodedFile{path: path, scope: scope}
	content, diags := f.Body.Content(fileSchema)
	diags = explainUnsupported(diags, fileSchema)
	seen := map[string]hcl.Range{}
	for _, b := range content.Blocks {
		switch b.Type {
		case "server":
			s, d := decodeServer(b, path, scope, ctx, transports)
			diags = append(diags, d...)
			if s == nil {
				continue
			}
			if first, dup := seen[s.Name]; dup {
				diags = append(diags, errorf(&s.nameRange, "Duplicate server",
					"A server named %q is already declared at %s; each server name may appear once per file.", s.Name, first))
				continue
			}
			seen[s.Name] = s.nameRange
			out.servers = append(out.servers, s)
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

func (p *partialSettings) firstRange() hcl.Range { return p.defRange }

func decodeServer(b *hcl.Block, path string, scope Scope, ctx *hcl.EvalContext, transports []string) (*decodedServer, hcl.Diagnostics) {
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
	decode("headers_helper", &s.HeadersHelper)
	decode("disabled", &s.Disabled)
	s.ConnectTimeout = decodeDuration(attrs["connect_timeout"], ctx, &diags)
	s.ToolTimeout = decodeDuration(attrs["tool_timeout"], ctx, &diags)
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
		for _, a := range []string{"url", "headers", "headers_helper"} {
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
		} else if msg := checkURL(s.Transport, s.URL); msg != "" {
			diags = append(diags, errorf(urlAttr.Expr.Range().Ptr(), "Invalid url", "%s", msg))
		}
		for k := range s.Headers {
			if !headerNameRE.MatchString(k) {
				diags = append(diags, errorf(attrs["headers"].Expr.Range().Ptr(), "Invalid header name",
					"%q is not a valid HTTP header name.", k))
			}
		}
	}
	return &decodedServer{Server: s, nameRange: b.LabelRanges[0]}, diags
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
	if a := attrs["connect_timeout"]; a != nil {
		v := decodeDuration(a, ctx, &diags)
		p.connectTimeout = &v
	}
	if a := attrs["tool_timeout"]; a != nil {
		v := decodeDuration(a, ctx, &diags)
		p.toolTimeout = &v
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
	if a := attrs["approve_all_project_servers"]; a != nil {
		var v bool
		diags = append(diags, decodeExpr(a.Expr, ctx, &v)...)
		p.approveAll, p.approveAllRange = &v, a.NameRange
	}
	if a := attrs["approved_project_servers"]; a != nil {
		diags = append(diags, decodeExpr(a.Expr, ctx, &p.approved)...)
		p.approvedRange = a.NameRange
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
