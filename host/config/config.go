// Package config loads mcphost's HCL configuration from its scopes (managed,
// --config files, local, project, user, dynamic), merges it by precedence and
// validates it, reporting every problem at once as HCL diagnostics with source
// ranges.
//
// A configuration file holds any number of server blocks and at most one
// settings block (and plugin, idp, permissions, policy, gateway, audit and
// telemetry blocks, each documented with its type):
//
//	settings {
//	  connect_timeout            = "30s"
//	  connect_concurrency_local  = 3
//	  connect_concurrency_remote = 20
//	}
//
//	server "everything" {
//	  command = "npx"
//	  args    = ["-y", "@modelcontextprotocol/server-everything"]
//	  env     = { API_KEY = env("API_KEY", "") }
//	}
//
//	server "docs" {
//	  transport = "http"
//	  url       = "https://docs.example.com/mcp"
//	  headers   = { Authorization = "Bearer ${env("DOCS_TOKEN")}" }
//	}
package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/mcphost/mcphost/host/permissions"
)

// Built-in transport names.
const (
	TransportStdio = "stdio"
	TransportSSE   = "sse"
	TransportHTTP  = "http"
	// TransportInProcess is a server linked in memory: an *mcp.Server of
	// the program that embeds the host (host.Options.InProcess). Only
	// dynamic servers (InProcessServer) have it; a configuration file
	// cannot name it.
	TransportInProcess = "inprocess"
)

// InProcessServer returns the dynamic server (LoadOptions.Dynamic) for an
// in-process server of that name; its implementation is given to the host
// in host.Options.InProcess.
func InProcessServer(name string) *Server {
	return &Server{Name: name, Transport: TransportInProcess, Origin: Origin{Scope: ScopeDynamic}}
}

// BuiltinTransports lists the transports the host implements itself.
var BuiltinTransports = []string{TransportStdio, TransportSSE, TransportHTTP}

// Defaults for settings that the configuration does not set.
const (
	DefaultConnectTimeout = 30 * time.Second
	// DefaultToolTimeout is how long a tool call may go without a result or
	// a progress notification when tool_timeout is not set. Long enough for
	// tools that work in silence for minutes (builds, test runs, large
	// queries), short enough that a hung server hands its caller an error,
	// and its concurrency slot back, within minutes rather than never.
	DefaultToolTimeout = 10 * time.Minute
	// DefaultMaxToolDuration is the longest a tool call may run, progress
	// or not, when max_tool_duration is not set: a server that streams
	// progress forever still ends (MCP lifecycle: "implementations SHOULD
	// always enforce a maximum timeout, regardless of progress").
	DefaultMaxToolDuration   = time.Hour
	DefaultConcurrencyLocal  = 3
	DefaultConcurrencyRemote = 20
	// DefaultSessionIdleTimeout ends a gateway session (serve --http) that
	// sent no request for this long; its client must initialize again.
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultMaxSessions caps the gateway's concurrent HTTP sessions. Each
	// costs about 15 KiB; a local gateway has a handful of clients, and a
	// client that leaks sessions is stopped long before memory matters.
	DefaultMaxSessions = 1000
	// DefaultDrainTimeout is how long shutdown waits for calls in flight
	// before answering them with an error and exiting; it is below the 30 s
	// that service managers (systemd, Kubernetes) wait before SIGKILL.
	DefaultDrainTimeout = 10 * time.Second
)

// Origin records where a server (or setting) was declared.
type Origin struct {
	Scope Scope     `json:"scope"`
	File  string    `json:"file,omitempty"`
	Range hcl.Range `json:"-"`
}

// Server is one MCP server's effective configuration.
type Server struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`

	// stdio
	Command    string            `json:"command,omitempty"`
	Args       []string          `json:"args,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	InheritEnv []string          `json:"inherit_env,omitempty"`
	// EnvFile is a dotenv file (absolute) read at each connect: its
	// variables are set under Env's (env_file).
	EnvFile string `json:"env_file,omitempty"`
	Cwd     string `json:"cwd,omitempty"`

	// remote
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// HeadersHelper is the argv of a command whose JSON output supplies
	// headers (run by the headers-helper plugin); they override Headers.
	HeadersHelper []string `json:"headers_helper,omitempty"`
	// TLS and proxy options for remote transports (paths are absolute).
	CAFile                string `json:"ca_file,omitempty"`
	ClientCertFile        string `json:"client_cert_file,omitempty"`
	ClientKeyFile         string `json:"client_key_file,omitempty"`
	TLSServerName         string `json:"tls_server_name,omitempty"`
	TLSInsecureSkipVerify bool   `json:"tls_insecure_skip_verify,omitempty"`
	ProxyURL              string `json:"proxy_url,omitempty"`
	// AuthScheme names the auth plugin scheme of an auth "SCHEME" block, and
	// AuthConfig is the block's configuration as a JSON object.
	AuthScheme string          `json:"auth_scheme,omitempty"`
	AuthConfig json.RawMessage `json:"auth_config,omitempty"`
	// AuthPerUser (the auth block's per_user) asks the auth plugin for
	// credentials per gateway user, telling it the user (sdk.Principal);
	// AuthInboundToken (inbound_token) also gives it the user's inbound
	// token, for an exchange of its own. Neither is sent in AuthConfig.
	AuthPerUser      bool `json:"auth_per_user,omitempty"`
	AuthInboundToken bool `json:"auth_inbound_token,omitempty"`
	// IdP is the identity provider the auth block names (idp = "NAME").
	IdP *IdP `json:"idp,omitempty"`
	// OAuth is the built-in OAuth client configuration (an oauth block).
	OAuth *OAuth `json:"oauth,omitempty"`
	// Tools, if set, limits which of the server's tools are served (a
	// tools { include, exclude } block), for everyone.
	Tools *ToolFilter `json:"tools,omitempty"`
	// TransportOptions are passed to a plugin transport as its configuration
	// (a JSON object, converted from the HCL object with its types).
	TransportOptions json.RawMessage `json:"transport_options,omitempty"`

	Disabled bool `json:"disabled,omitempty"`
	// LegacySession (legacy_session) sends the calls of clients of protocol
	// versions before 2026-07-28 to a second session of the server at
	// 2025-11-25 when the server speaks 2026-07-28: there it may ask for
	// input by requests of its own, as tools written for 2025-11-25 do. On
	// unless set to false (nil: on; see LegacySessionOn): the second session
	// shares no session state with the first, which lists, reads and
	// subscribes (for a stdio server it is a second process).
	LegacySession *bool `json:"legacy_session,omitempty"`
	// LegacyPool (legacy_pool) bounds the second sessions of a server
	// reached over its own pipe (stdio, plugin, legacy SSE), where each
	// serves the calls of one client at a time: a further one is opened
	// while the others are busy with other clients' calls, up to this many
	// in all (0: DefaultLegacyPool). Not in the approval or config hash:
	// the same server, more sessions of it; a reload applies it at once.
	LegacyPool     int           `json:"legacy_pool,omitempty"`
	ConnectTimeout time.Duration `json:"connect_timeout,omitempty"`
	// ToolTimeout is how long a call may go without a result or a progress
	// notification (0: the settings' value, else DefaultToolTimeout).
	ToolTimeout time.Duration `json:"tool_timeout,omitempty"`
	// MaxToolDuration is the longest a call may run, whatever progress it
	// reports (0: the settings' value, else DefaultMaxToolDuration). It is
	// never shorter than ToolTimeout.
	MaxToolDuration time.Duration `json:"max_tool_duration,omitempty"`

	Origin Origin `json:"origin"`

	// BlockedBy, if set, is the managed server policy entry that blocks this
	// server: it is never started or contacted.
	BlockedBy string `json:"blocked_by,omitempty"`

	// Registry is the MCP Registry entry the server was installed from
	// ("NAME@VERSION", the registry attribute). Such a server needs approval
	// in every scope, like a project server (NeedsApproval).
	Registry string `json:"registry,omitempty"`

	// Approved reports, for a project-scope server or a registry server,
	// whether the user approved exactly this configuration. Other servers
	// are always approved.
	Approved bool `json:"approved"`

	// InterceptorOnly marks a server named by an interceptor block's server
	// attribute (a SEP-2624 interceptor server): it is connected, approved,
	// pinned and supervised like every server, but its tools, prompts and
	// resources are not served and it does not count for readiness.
	InterceptorOnly bool `json:"interceptor_only,omitempty"`

	// writtenHash is the ApprovalHash of a project server's block as written
	// (env() calls unevaluated), and written is that form of the server.
	writtenHash string
	written     *Server
	// envFileDigest is, for a server that needs approval, the digest of
	// its env_file's content at load (its approval covers it), and
	// approvalNote why an earlier approval no longer holds when that is
	// the file (EnvFileDigest, ApprovalNote).
	envFileDigest string
	approvalNote  string
}

// Written returns, for a server from a project file, the server as written:
// env() calls not evaluated but shown as the call. It is what the user
// approves; for other servers it returns s.
func (s *Server) Written() *Server {
	if s.written != nil {
		return s.written
	}
	return s
}

// IsRemote reports whether the server is reached over the network (not
// stdio, not in-process).
func (s *Server) IsRemote() bool {
	return s.Transport != TransportStdio && s.Transport != TransportInProcess
}

// Signature identifies what a server actually runs or reaches, for deduplication:
// the URL for a remote server, command and arguments for a stdio server.
func (s *Server) Signature() string {
	if s.Transport == TransportInProcess {
		return "inprocess:" + s.Name
	}
	if s.IsRemote() {
		return "url:" + s.URL
	}
	b, _ := json.Marshal(append([]string{s.Command}, s.Args...))
	return "cmd:" + string(b)
}

// ApprovalHash is the sha256 of what a user approves for a project server:
// everything that decides what runs (command, args, env, inherit_env,
// env_file's path and, for a server that needs approval, its content as
// loaded, cwd for stdio) or what is sent and where (for remote servers: transport, URL,
// headers, headers helper, the oauth block or auth block and its settings,
// TLS and proxy settings, transport options), and legacy_session (a second
// process or session of the server). Any change to these requires
// approval again.
//
// For a server loaded from a project file, the hash is of the block as
// written: an env("NAME") call counts as the call, not as the variable's
// value, so the hash never depends on a secret and env() is not evaluated
// before approval.
func (s *Server) ApprovalHash() string {
	if s.writtenHash != "" {
		return s.writtenHash
	}
	return s.approvalHash()
}

func (s *Server) approvalHash() string {
	var v any
	if s.IsRemote() {
		v = struct {
			Transport, URL   string
			Headers          map[string]string
			HeadersHelper    []string // a command the host runs
			AuthScheme       string
			AuthConfig       json.RawMessage
			OAuth            *OAuth
			CAFile           string
			ClientCertFile   string
			ClientKeyFile    string
			TLSServerName    string
			TLSSkipVerify    bool
			ProxyURL         string
			TransportOptions json.RawMessage
			LegacySession    bool   `json:",omitempty"` // legacy_session = true as written (omitted otherwise: earlier approvals stay valid)
			AuthPerUser      bool   `json:",omitempty"`
			AuthInboundToken bool   `json:",omitempty"`
			Registry         string `json:",omitempty"` // (omitted when unset: earlier approvals stay valid)
		}{s.Transport, s.URL, s.Headers, s.HeadersHelper, s.AuthScheme, s.AuthConfig, s.OAuth,
			s.CAFile, s.ClientCertFile, s.ClientKeyFile, s.TLSServerName, s.TLSInsecureSkipVerify, s.ProxyURL, s.TransportOptions, s.legacyWritten(),
			s.AuthPerUser, s.AuthInboundToken, s.Registry}
	} else {
		v = struct {
			Command  string
			Args     []string
			Env      map[string]string // json sorts map keys
			Inherit  []string
			Cwd      string
			Legacy   bool   `json:",omitempty"` // legacy_session = true as written (omitted otherwise: earlier approvals stay valid)
			EnvFile  string `json:",omitempty"` // the file's path (its content's digest follows the hash, envFileHashSep); omitted when unset: earlier approvals stay valid
			Registry string `json:",omitempty"` // (omitted when unset: earlier approvals stay valid)
		}{s.Command, s.Args, s.Env, s.InheritEnv, s.Cwd, s.legacyWritten(), s.EnvFile, s.Registry}
		if s.envFileDigest != "" {
			return "sha256:" + hashJSON(v) + envFileHashSep + s.envFileDigest
		}
	}
	return "sha256:" + hashJSON(v)
}

// LegacySessionOn reports whether the calls of clients before 2026-07-28
// may go to a second session of the server (legacy_session, on unless set
// to false).
func (s *Server) LegacySessionOn() bool { return s.LegacySession == nil || *s.LegacySession }

// legacyWritten is legacy_session = true as written: what the approval hash
// has held since the attribute was added, when it was off by default (the
// default, now on, and false leave earlier approvals valid).
func (s *Server) legacyWritten() bool { return s.LegacySession != nil && *s.LegacySession }

// PerUser reports whether the server's credentials are kept per gateway
// user (oauth { per_user } or token_exchange, auth { per_user }): a gateway
// user's requests go through a connection of that user's own.
func (s *Server) PerUser() bool {
	return (s.OAuth != nil && s.OAuth.PerUser) || (s.AuthScheme != "" && s.AuthPerUser)
}

// ConfigHash is a hash of everything that affects the connection; connections
// and tokens are keyed by name + ConfigHash, so an edited server reconnects.
//
// legacy_session is hashed as it was when off by default (a bool omitted
// when false): present only when written true. So no hash of a
// configuration written before it was on by default changes — an explicit
// false and the attribute left out hash alike, and stored tokens stay
// found — at the price that writing a redundant true (or removing one)
// changes the hash, as it did before. Whether the second session is on is
// compared apart from the hash where it matters (conn's sameConnection).
func (s *Server) ConfigHash() string {
	c := *s
	c.Origin = Origin{}
	c.Approved = false
	c.LegacySession, c.LegacyPool = nil, 0
	if s.legacyWritten() {
		c.LegacySession = s.LegacySession
	}
	return hashJSON(c)[:16]
}

func hashJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain data is hashed
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Skipped is a declared server that will not be used, and why.
type Skipped struct {
	Server *Server `json:"server"`
	Reason string  `json:"reason"`
}

// File is one configuration file that was read.
type File struct {
	Path  string `json:"path"`
	Scope Scope  `json:"scope"`
}

// Config is the effective configuration after merging every scope.
type Config struct {
	// Servers are the effective servers, sorted by name. Project servers that
	// are not approved are included with Approved == false.
	Servers []*Server `json:"servers"`
	// Skipped lists declared servers that were overridden, deduplicated, or
	// excluded by an exclusive managed configuration.
	Skipped  []*Skipped `json:"skipped,omitempty"`
	Settings Settings   `json:"settings"`
	// Permissions are the permission rules of every scope, lowest scope first.
	Permissions []PermissionRule `json:"permissions,omitempty"`
	// DefaultMode is the permission default mode ("" means ask), and
	// DefaultModeOrigin where it was set.
	DefaultMode       string  `json:"default_mode,omitempty"`
	DefaultModeOrigin *Origin `json:"default_mode_origin,omitempty"`
	// Plugins are the configured and discovered plugins, sorted by name.
	Plugins []*Plugin `json:"plugins,omitempty"`
	// IdPs are the declared identity providers (idp blocks), sorted by name.
	IdPs []*IdP `json:"idps,omitempty"`
	// Hooks are the hook blocks and Interceptors the interceptor blocks of
	// every scope, in load order (lowest scope first, declared order within
	// a file); a project file's are included with Approved == false until
	// approved.
	Hooks        []*Hook        `json:"hooks,omitempty"`
	Interceptors []*Interceptor `json:"interceptors,omitempty"`
	// Endpoints are the gateway's named endpoints (endpoint blocks),
	// sorted by name.
	Endpoints []*Endpoint `json:"endpoints,omitempty"`
	// Gateway configures serve --http as a shared service (a gateway
	// block), or nil.
	Gateway *Gateway `json:"gateway,omitempty"`
	// Audit configures the gateway's audit log (an audit block), or nil.
	Audit *Audit `json:"audit,omitempty"`
	// Telemetry configures OpenTelemetry traces and metrics (a telemetry
	// block), or nil.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
	// State configures what the gateway's replicas share (a state block).
	// OPTIONAL: nil is this machine's files and memory.
	State *State `json:"state,omitempty"`
	// Transports lists every available transport: built-in and from locked plugins.
	Transports []string `json:"transports"`
	// Files lists the files read, lowest precedence first.
	Files []File `json:"files"`
	// ManagedExclusive reports whether the managed file declares servers, so
	// that every other scope's servers were ignored.
	ManagedExclusive bool `json:"managed_exclusive"`
	// Watch lists, for a file watcher, every path whose creation, change or
	// removal changes what Load returns with the same LoadOptions: each
	// scope's file whether it exists or not (every place a project file is
	// looked for, and the .git entries that decide the project's root and
	// so its local file), the plugin lock file, the plugin directory and the
	// secrets directory. The paths are absolute, without duplicates, in
	// load order. A watcher should watch each path's directory, as a file
	// is often replaced (renamed over) rather than written.
	Watch []string `json:"-"`

	// Sources maps file names to their bytes, for rendering diagnostics.
	Sources map[string]*hcl.File `json:"-"`

	// checksHash is ChecksApprovalHash, and writtenHooks and
	// writtenInterceptors the project files' hook and interceptor blocks
	// as written (env() calls unevaluated), what an approval covers.
	checksHash          string
	writtenHooks        []*Hook
	writtenInterceptors []*Interceptor
}

// Server returns the effective server with the given name, or nil.
func (c *Config) Server(name string) *Server {
	i := sort.Search(len(c.Servers), func(i int) bool { return c.Servers[i].Name >= name })
	if i < len(c.Servers) && c.Servers[i].Name == name {
		return c.Servers[i]
	}
	return nil
}

// Plugin is a plugin binary the host may start.
type Plugin struct {
	Name string `json:"name"`
	// Path is the binary's absolute path.
	Path string `json:"path"`
	// SHA256 is the checksum pinned in the plugin block, if any.
	SHA256 string `json:"sha256,omitempty"`
	// Discovered is set for plugins found in the plugin directory rather than declared.
	Discovered bool `json:"discovered,omitempty"`
	// Locked is the plugin's entry in the lock file, if it matches Path.
	Locked *LockedPlugin `json:"locked,omitempty"`
	Origin Origin        `json:"origin"`
}

// Pin returns the checksum the binary must have: the plugin block's, else the
// lock file's. "" means the plugin is not pinned and must not be started.
func (p *Plugin) Pin() string {
	if p.SHA256 != "" {
		return p.SHA256
	}
	if p.Locked != nil {
		return p.Locked.SHA256
	}
	return ""
}

// PluginForScheme returns the plugin that provides an auth scheme, or nil.
func (c *Config) PluginForScheme(scheme string) *Plugin {
	for _, p := range c.Plugins {
		if p.Locked != nil && slices.Contains(p.Locked.AuthSchemes, scheme) {
			return p
		}
	}
	return nil
}

// PluginFor returns the plugin that provides a transport, or nil.
func (c *Config) PluginFor(transport string) *Plugin {
	for _, p := range c.Plugins {
		if p.Locked != nil && slices.Contains(p.Locked.Transports, transport) {
			return p
		}
	}
	return nil
}

// Plugin returns the plugin with the given name, or nil.
func (c *Config) Plugin(name string) *Plugin {
	for _, p := range c.Plugins {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// PermissionRule is one permission pattern with its origin.
type PermissionRule struct {
	Behavior permissions.Behavior `json:"behavior"`
	Pattern  string               `json:"pattern"`
	// For limits the rule to the principals its block's for_principals
	// names (nil: everyone).
	For    *permissions.Principals `json:"for_principals,omitempty"`
	Origin Origin                  `json:"origin"`
}

// Source describes where a rule or setting was written: scope, file and line.
func (o Origin) Source() string {
	if o.File == "" {
		return o.Scope.String() + " scope"
	}
	return fmt.Sprintf("%s scope, %s:%d", o.Scope, o.File, o.Range.Start.Line)
}

// Policy compiles the permission rules.
func (c *Config) Policy() (*permissions.Policy, error) {
	rules := make([]permissions.Rule, len(c.Permissions))
	for i, r := range c.Permissions {
		rules[i] = permissions.Rule{Behavior: r.Behavior, Pattern: r.Pattern, Source: r.Origin.Source(), For: r.For}
	}
	mode, src := permissions.Mode(c.DefaultMode), ""
	if c.DefaultModeOrigin != nil {
		src = c.DefaultModeOrigin.Source()
	}
	p, err := permissions.Compile(rules, mode, src)
	if err == nil && c.DefaultModeOrigin != nil && c.DefaultModeOrigin.Scope == ScopeManaged {
		p.ManagedMode()
	}
	return p, err
}

// ServerMatcher is one entry of the managed server policy: a server name, a
// URL wildcard, or a command (argv, each element a wildcard).
type ServerMatcher struct {
	Name    string   `json:"name,omitempty"`
	URL     string   `json:"url,omitempty"`
	Command []string `json:"command,omitempty"`
	Origin  Origin   `json:"origin"`
}

// Matches reports whether the entry covers the server.
func (m *ServerMatcher) Matches(s *Server) bool {
	switch {
	case m.Name != "":
		return m.Name == s.Name
	case m.URL != "":
		return s.IsRemote() && permissions.Match(m.URL, s.URL)
	case len(m.Command) > 0:
		argv := append([]string{s.Command}, s.Args...)
		if s.IsRemote() || len(argv) != len(m.Command) {
			return false
		}
		for i, p := range m.Command {
			if !permissions.Match(p, argv[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func (m *ServerMatcher) String() string {
	var what string
	switch {
	case m.Name != "":
		what = fmt.Sprintf("name = %q", m.Name)
	case m.URL != "":
		what = fmt.Sprintf("url = %q", m.URL)
	default:
		what = fmt.Sprintf("command = %q", m.Command)
	}
	return fmt.Sprintf("{ %s } (%s)", what, m.Origin.Source())
}

// DefaultLegacyPool is how many second sessions (legacy_session) a server
// reached over its own pipe gets at most, by default (legacy_pool).
const DefaultLegacyPool = 4

// LegacyPoolSize is the most second sessions the server may have open at
// once (legacy_pool, else DefaultLegacyPool): on a server's own pipe
// (stdio, plugin, legacy SSE) each serves one client's calls at a time.
func (s *Server) LegacyPoolSize() int {
	if s.LegacyPool > 0 {
		return s.LegacyPool
	}
	return DefaultLegacyPool
}
