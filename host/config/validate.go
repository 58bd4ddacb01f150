package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
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

func validSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32
}

// checkServerBlock checks a decoded server on its own: the arguments its
// transport uses, names of environment variables and headers, the url,
// one credential source, and what a project file may not relax (those are
// turned off, with a warning). written says the server was decoded as
// written (a project server before approval): a url from env() is not
// checked yet.
func checkServerBlock(ds *decodedServer, scope Scope, written bool) hcl.Diagnostics {
	var diags hcl.Diagnostics
	s, attrs := ds.Server, ds.attrs
	diags = append(diags, checkRegistryAttr(attrs["registry"], s.Registry)...)
	notFor := func(attrName, transport, use string) {
		if a, ok := attrs[attrName]; ok {
			diags = append(diags, errorf(&a.NameRange, "Argument not valid for this transport",
				"%q is not used by the %s transport; %s.", attrName, transport, use))
		}
	}
	if s.Transport == TransportStdio {
		if strings.TrimSpace(s.Command) == "" {
			r := ds.defRange
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
		if a, ok := attrs["env_file"]; ok {
			diags = append(diags, checkEnvFile(a, s.EnvFile)...)
		}
	} else {
		for _, a := range []string{"command", "args", "env", "inherit_env", "env_file", "cwd"} {
			notFor(a, s.Transport, "it applies to the stdio transport")
		}
		if a := attrs["url"]; a == nil {
			diags = append(diags, errorf(&ds.defRange, "Missing url",
				"A %s server needs a url, e.g. url = \"https://example.com/mcp\".", s.Transport))
		} else if msg := checkURL(s.Transport, s.URL); msg != "" && !(written && FromEnv(s.URL)) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid url", "%s", msg))
		}
		if (s.ClientCertFile == "") != (s.ClientKeyFile == "") {
			diags = append(diags, errorf(&ds.defRange, "Incomplete client certificate",
				"client_cert_file and client_key_file go together: set both for mutual TLS, or neither."))
		}
		if s.Transport == TransportHTTP || s.Transport == TransportSSE {
			notFor("transport_options", s.Transport, "it passes options to a plugin transport")
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
			diags = append(diags, warnf(ds.oauthRange, "Ignored in project scope",
				"allow_loopback turns off the OAuth SSRF guard for loopback addresses, so a project file cannot set it; set it in your local scope."))
			s.OAuth.AllowLoopback = false
		}
	}
	if ds.oauthRange != nil && ds.auth != nil {
		diags = append(diags, errorf(ds.oauthRange, "Two credential sources", "A server uses the built-in oauth block or an auth plugin (auth %q at %s), not both.", ds.auth.Scheme, ds.auth.DefRange))
	}
	if ds.oauthRange != nil && s.Transport != TransportHTTP && s.Transport != TransportSSE {
		diags = append(diags, errorf(ds.oauthRange, "OAuth not valid for this transport", "The built-in oauth block applies to the http and sse transports; a plugin transport gets credentials from an auth plugin (auth \"SCHEME\" { … })."))
	}
	if ds.auth != nil && !s.IsRemote() {
		diags = append(diags, errorf(&ds.auth.DefRange, "Auth not valid for this transport", "An auth block applies to remote transports (http, sse, or a plugin transport), not to stdio."))
	}
	return diags
}

// checkURL validates a remote server URL for its transport; "" means valid.
func checkURL(transport, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("%q is not a URL: %v.", raw, err)
	}
	// A plugin transport chooses its own schemes (tcp://, ws://, …): the
	// plugin gets the url as written and refuses a scheme it does not
	// serve when it opens the connection.
	if allowed := []string{"http", "https"}; (transport == TransportHTTP || transport == TransportSSE) && !slices.Contains(allowed, u.Scheme) {
		return fmt.Sprintf("%q has scheme %q; the %s transport accepts %s.", raw, u.Scheme, transport, strings.Join(allowed, ", "))
	}
	if u.Scheme == "" {
		return fmt.Sprintf("%q has no scheme; write it as SCHEME://HOST…, e.g. %q.", raw, transport+"://"+strings.TrimLeft(raw, "/"))
	}
	if u.Host == "" {
		return fmt.Sprintf("%q has no host.", raw)
	}
	if u.User != nil {
		return "credentials in the url are not allowed; use headers or an auth block."
	}
	return ""
}

// parseDuration parses the value of a duration attribute (0 when a is nil,
// not set).
func parseDuration(a *hcl.Attribute, s string, diags *hcl.Diagnostics) time.Duration {
	if a == nil {
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

// checkToolDurations reports a max_tool_duration shorter than the
// tool_timeout of the same block: the cap would make the timeout meaningless.
func checkToolDurations(attrs hcl.Attributes, timeout, max time.Duration, diags *hcl.Diagnostics) {
	if timeout <= 0 || max <= 0 || max >= timeout {
		return
	}
	*diags = append(*diags, errorf(attrs["max_tool_duration"].Expr.Range().Ptr(), "Invalid max_tool_duration",
		"max_tool_duration (%s) is shorter than tool_timeout (%s); it is the cap on a whole call, which progress notifications cannot extend, so it must be at least tool_timeout.", max, timeout))
}

// checkServer checks a decoded server against what the locked plugins
// provide: its auth block, its idp reference and its transport options.
func checkServer(cfg *Config, ds *decodedServer, ctx *hcl.EvalContext, unlocked []string) hcl.Diagnostics {
	var d hcl.Diagnostics
	if ds.auth != nil {
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

// checkAuth checks an auth "SCHEME" block: a locked plugin must provide the
// scheme, and the block must fit the schema the plugin reported.
func checkAuth(cfg *Config, ds *decodedServer, ctx *hcl.EvalContext, unlocked []string) hcl.Diagnostics {
	blk := ds.auth
	p := cfg.PluginForScheme(blk.Scheme)
	if p == nil {
		var available []string
		for _, pl := range cfg.Plugins {
			if pl.Locked != nil {
				available = append(available, pl.Locked.AuthSchemes...)
			}
		}
		detail := fmt.Sprintf("No plugin provides the auth scheme %q.", blk.Scheme)
		if len(available) > 0 {
			detail += " Available schemes: " + strings.Join(available, ", ") + "."
		} else {
			detail += " No auth scheme is available."
		}
		if len(unlocked) > 0 {
			detail += fmt.Sprintf(" Plugins whose schemes are not known yet: %s; run `mcphost plugins lock`.", strings.Join(unlocked, ", "))
		}
		return hcl.Diagnostics{errorf(&blk.SchemeRange, "Unknown auth scheme", "%s", detail)}
	}
	c := p.Locked.Component("auth", blk.Scheme)
	if c == nil {
		return nil
	}
	return checkPairs(authPairs(blk), blk.DefRange, ctx, c, fmt.Sprintf("%s auth scheme (plugin %s)", blk.Scheme, p.Name))
}

// optionPair is one configured option: its key, where the key is, and its value.
type optionPair struct {
	key      string
	keyRange hcl.Range
	value    hcl.Expression
}

// authPairs lists an auth block's attributes as option pairs.
func authPairs(b *authBlock) []optionPair {
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

// checkEnvFile checks a stdio server's env_file (path, absolute by now): it
// is read at each connect, so a file that is missing now is a warning (the
// server's connects fail, naming it, until it exists), and one that is a
// directory an error. A path from env() is checked at connect.
func checkEnvFile(a *hcl.Attribute, path string) hcl.Diagnostics {
	if path == "" {
		return hcl.Diagnostics{errorf(a.Expr.Range().Ptr(), "Empty env_file",
			"env_file names a dotenv file of NAME=value lines (relative to this file's directory); remove the attribute or give a path.")}
	}
	if FromEnv(path) {
		return nil
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return hcl.Diagnostics{warnf(a.Expr.Range().Ptr(), "env_file not readable",
			"%s cannot be read (%v): the server's connects will fail until it can.", path, errors.Unwrap(err))}
	case fi.IsDir():
		return hcl.Diagnostics{errorf(a.Expr.Range().Ptr(), "env_file is a directory",
			"%s is a directory; env_file names a dotenv file of NAME=value lines.", path)}
	}
	return nil
}
