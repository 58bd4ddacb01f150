package config

import (
	"net/url"
	"reflect"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// State configures what the gateway's replicas share (a state block):
//
//	state {
//	  backend    = "redis"        # "local" (the default: this machine's files and memory) or "redis"
//	  url        = "redis://:${env("MCPHOST_REDIS_PASSWORD")}@redis:6379/0"  # or rediss:// (TLS)
//	  key_prefix = "mcphost:"     # default "mcphost:"
//	  ca_file    = "/etc/mcphost/redis-ca.pem"   # rediss: the CA of the server (default: the system's)
//	  cert_file  = "/etc/mcphost/redis-client.pem"  # rediss: a client certificate, with key_file
//	  key_file   = "/etc/mcphost/redis-client.key"
//	}
//
// The Redis backend also works with Valkey. It keeps OAuth tokens sealed
// with the operator's keys (MCPHOST_SESSION_KEYS), so it needs them. It is
// operator configuration that moves credentials off the machine, so only
// the user, local, cli and managed scopes may set it: a project file's is
// ignored, with a warning, and not evaluated. The block of the highest
// scope wins whole. The url often holds a password: `config show` redacts
// it. A change applies at the next start of mcphost serve.
type State struct {
	// Backend is StateLocal or StateRedis.
	Backend string `hcl:"backend" json:"backend"`
	// URL is the Redis server: redis://[user:password@]host:port[/db], or
	// rediss:// for TLS.
	URL string `hcl:"url,optional" json:"url,omitempty"`
	// KeyPrefix starts every key the gateway writes, so that several
	// gateways (or other programs) share one server.
	KeyPrefix string `hcl:"key_prefix,optional" json:"key_prefix,omitempty"`
	// CAFile, CertFile and KeyFile configure TLS (rediss:// only).
	CAFile   string `hcl:"ca_file,optional" json:"ca_file,omitempty"`
	CertFile string `hcl:"cert_file,optional" json:"cert_file,omitempty"`
	KeyFile  string `hcl:"key_file,optional" json:"key_file,omitempty"`
	Origin   Origin `json:"origin"`
}

// State backends (state { backend }).
const (
	StateLocal = "local"
	StateRedis = "redis"
)

// DefaultKeyPrefix is the default of state { key_prefix }.
const DefaultKeyPrefix = "mcphost:"

// decodeState decodes a state block, its defaults filled in.
func decodeState(b *hcl.Block, path string, scope Scope, ctx *hcl.EvalContext) (*State, hcl.Diagnostics) {
	s := &State{}
	attrs, diags := decodeBody(b.Body, ctx, s)
	s.Origin = Origin{Scope: scope, File: path, Range: b.DefRange}
	at := func(name string) *hcl.Range {
		if a, ok := attrs[name]; ok {
			return a.Expr.Range().Ptr()
		}
		return &b.DefRange
	}
	if diags.HasErrors() {
		return nil, diags
	}
	redisOnly := []string{"url", "key_prefix", "ca_file", "cert_file", "key_file"}
	switch s.Backend {
	case StateLocal:
		for _, name := range redisOnly {
			if _, ok := attrs[name]; ok {
				diags = append(diags, errorf(at(name), "Attribute of the redis backend",
					"%s configures the redis backend; the local backend takes no other attribute.", name))
			}
		}
	case StateRedis:
		if s.KeyPrefix == "" {
			if _, ok := attrs["key_prefix"]; ok {
				diags = append(diags, errorf(at("key_prefix"), "Invalid key_prefix", "key_prefix may not be empty; leave it out for %q.", DefaultKeyPrefix))
			}
			s.KeyPrefix = DefaultKeyPrefix
		}
		u, err := url.Parse(s.URL)
		switch {
		case s.URL == "":
			diags = append(diags, errorf(at("url"), "Missing url", `The redis backend needs the server's url, e.g. "redis://:${env("MCPHOST_REDIS_PASSWORD")}@redis:6379/0" (rediss:// for TLS).`))
		case err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "":
			// (Never quoted: it may hold a password.)
			diags = append(diags, errorf(at("url"), "Invalid url", "url must be redis://[user:password@]host:port[/db] or rediss://… for TLS."))
		case u.Scheme == "redis":
			for _, name := range []string{"ca_file", "cert_file", "key_file"} {
				if _, ok := attrs[name]; ok {
					diags = append(diags, errorf(at(name), "TLS without rediss", "%s configures TLS: use a rediss:// url.", name))
				}
			}
		}
		if (s.CertFile == "") != (s.KeyFile == "") {
			diags = append(diags, errorf(&b.DefRange, "Incomplete client certificate", "cert_file and key_file go together."))
		}
	default:
		diags = append(diags, errorf(at("backend"), "Invalid backend",
			"backend must be one of %s, got %q.", strings.Join([]string{StateLocal, StateRedis}, ", "), s.Backend))
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return s, diags
}

// mergeState takes the state block of the highest scope that has one; a
// project's is ignored, with a warning.
func mergeState(cfg *Config, files []*decodedFile) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, f := range files {
		if f.scope == ScopeProject {
			if f.stateRange != nil {
				diags = append(diags, warnf(f.stateRange, "Ignored in project scope",
					"A state block is only honoured in the user, local, cli and managed scopes: a repository's configuration may not send tokens anywhere."))
			}
			continue
		}
		if f.state != nil {
			cfg.State = f.state
		}
	}
	return diags
}

// Equal reports whether s and o configure the state alike (where the
// blocks are written does not count). Either may be nil (no state block).
func (s *State) Equal(o *State) bool {
	if s == nil || o == nil {
		return s == o
	}
	a, b := *s, *o
	a.Origin, b.Origin = Origin{}, Origin{}
	return reflect.DeepEqual(a, b)
}

// RedactedURL is the url with its password replaced, for display.
func (s *State) RedactedURL() string {
	const redacted = "REDACTED"
	u, err := url.Parse(s.URL)
	if err != nil {
		return "<redacted>"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), redacted)
	}
	return u.String()
}
