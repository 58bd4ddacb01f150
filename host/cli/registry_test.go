package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/mcpregistry"
	"github.com/mcphost/mcphost/host/mcpregistry/registrytest"
)

// registryEnv is a CLI run against a test registry (an httptest server
// on 127.0.0.1 serving the registry's own example documents), in a home
// directory of the test's own.
type registryEnv struct {
	t              *testing.T
	reg            *registrytest.Server
	dir, home      string
	env            map[string]string
	stdout, stderr bytes.Buffer
}

func newRegistryEnv(t *testing.T) *registryEnv {
	t.Helper()
	dir := t.TempDir()
	r := &registryEnv{t: t, reg: registrytest.Load(t, filepath.Join("..", "mcpregistry", "testdata", "servers.json")), dir: dir, home: filepath.Join(dir, "home")}
	r.env = map[string]string{
		"HOME": r.home, "APPDATA": filepath.Join(dir, "appdata"), "XDG_CONFIG_HOME": filepath.Join(r.home, ".config"),
		config.EnvManagedConfig: filepath.Join(dir, "none.hcl"), config.EnvLocalConfig: filepath.Join(dir, "local.hcl"),
	}
	return r
}

func (r *registryEnv) run(args ...string) error {
	r.t.Helper()
	r.stdout.Reset()
	r.stderr.Reset()
	a := &app{stdin: strings.NewReader(""), stdout: &r.stdout, stderr: &r.stderr,
		lookupEnv: func(k string) (string, bool) { v, ok := r.env[k]; return v, ok }, workDir: r.dir}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(&r.stderr)
	root.SetErr(&r.stderr)
	return root.ExecuteContext(context.Background())
}

func (r *registryEnv) local() string {
	b, _ := os.ReadFile(r.env[config.EnvLocalConfig])
	return string(b)
}

func (r *registryEnv) secretsDir() string {
	return config.SecretsDir(func(k string) (string, bool) { v, ok := r.env[k]; return v, ok }, r.dir)
}

// TestRegistrySearchShow: search lists name, latest version, transports
// and description; show lists each package's command and inputs; the
// registry comes from --registry or $MCPHOST_REGISTRY_URL.
func TestRegistrySearchShow(t *testing.T) {
	r := newRegistryEnv(t)
	if err := r.run("registry", "search", "brave", "--registry", r.reg.URL); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	out := r.stdout.String()
	for _, want := range []string{"NAME", "io.modelcontextprotocol.anonymous/brave-search  1.0.2", "npm", "MCP server for Brave Search API integration"} {
		if !strings.Contains(out, want) {
			t.Errorf("search: no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "1.0.1") {
		t.Errorf("search lists an old version:\n%s", out)
	}

	// The environment names the registry.
	r.env[mcpregistry.EnvURL] = r.reg.URL
	before := r.reg.Requests.Load()
	if err := r.run("registry", "show", "io.github.example/database-manager"); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if r.reg.Requests.Load() == before {
		t.Fatal("$MCPHOST_REGISTRY_URL not used")
	}
	out = r.stdout.String()
	for _, want := range []string{
		"io.github.example/database-manager 3.1.0 (latest)",
		"Package 1: oci docker.io/example/database-manager-mcp:3.1.0",
		"runs: docker run -i --rm --network host -e DB_TYPE=<db_type> -e DB_USERNAME -e DB_PASSWORD -e SSL_MODE docker.io/example/database-manager-mcp:3.1.0 --host localhost <database_name>",
		"-e DB_PASSWORD=…", "required, secret", "one of postgres|mysql|mongodb|redis",
		"Install: mcphost server add database-manager --from-registry io.github.example/database-manager@3.1.0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show: no %q in\n%s", want, out)
		}
	}
	if err := r.run("registry", "show", "io.modelcontextprotocol.anonymous/hybrid-mcp", "--json"); err != nil || !strings.Contains(r.stdout.String(), `"streamable-http"`) {
		t.Errorf("show --json: %v\n%s", err, r.stdout.String())
	}

	// 404, and a registry that is not one.
	err := r.run("registry", "show", "io.github.nobody/none@1.0.0")
	if err == nil || err.Error() != "no server io.github.nobody/none version 1.0.0 in "+r.reg.URL {
		t.Errorf("404: %v", err)
	}
	if err := r.run("registry", "search", "x", "--registry", "ftp://mirror"); err == nil || !strings.Contains(err.Error(), "want an http:// or https:// URL") {
		t.Errorf("bad --registry: %v", err)
	}
}

// TestServerAddFromRegistry: each kind of entry becomes its server block,
// with registry = "NAME@VERSION"; secrets are stored (secret()) or read
// from the environment (env()), never written nor printed.
func TestServerAddFromRegistry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		block   string // the block written (secret names: <SECRET:KEY>)
		secrets map[string]string
		stdout  []string
		err     string
	}{
		{name: "npm, secret given", args: []string{"brave", "--from-registry", "io.modelcontextprotocol.anonymous/brave-search", "-e", "BRAVE_API_KEY=bsk-s3cr3t"},
			block: `server "brave" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-brave-search@1.0.2"]
  env = {
    BRAVE_API_KEY = secret("<SECRET:BRAVE_API_KEY>")
  }
  registry = "io.modelcontextprotocol.anonymous/brave-search@1.0.2"
}
`, secrets: map[string]string{"BRAVE_API_KEY": "bsk-s3cr3t"},
			stdout: []string{"The secret environment variable BRAVE_API_KEY is stored in", "mcphost config approve brave"}},
		{name: "an explicit version, the name derived, the secret from the environment", args: []string{"--from-registry", "io.modelcontextprotocol.anonymous/brave-search@1.0.1"},
			block: `server "brave-search" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-brave-search@1.0.1"]
  env = {
    BRAVE_API_KEY = env("BRAVE_API_KEY")
  }
  registry = "io.modelcontextprotocol.anonymous/brave-search@1.0.1"
}
`, stdout: []string{"The secret environment variable BRAVE_API_KEY is read from $BRAVE_API_KEY at run time (not set here"}},
		{name: "pypi", args: []string{"--from-registry", "io.github.example/weather-mcp", "--env-from", "-e", "WEATHER_UNITS=fahrenheit"},
			block: `server "weather-mcp" {
  command = "uvx"
  args    = ["weather-mcp-server==0.5.0"]
  env = {
    WEATHER_API_KEY = env("WEATHER_API_KEY")
    WEATHER_UNITS   = "fahrenheit"
  }
  registry = "io.github.example/weather-mcp@0.5.0"
}
`},
		{name: "nuget", args: []string{"sample", "--from-registry", "io.github.joelverhagen/knapcode-samplemcpserver@0.4.0-beta", "-e", "WEATHER_CHOICES=sunny,rainy"},
			block: `server "sample" {
  command = "dnx"
  args    = ["Knapcode.SampleMcpServer@0.4.0-beta", "--yes", "--", "mcp", "start"]
  env = {
    WEATHER_CHOICES = "sunny,rainy"
  }
  registry = "io.github.joelverhagen/knapcode-samplemcpserver@0.4.0-beta"
}
`},
		{name: "oci", args: []string{"fs", "--from-registry", "io.github.modelcontextprotocol/filesystem", "--package", "2", "-e", "source_path=/srv/data"},
			block: `server "fs" {
  command = "docker"
  args    = ["run", "-i", "--rm", "--mount", "type=bind,src=/srv/data,dst=/project", "-e", "LOG_LEVEL", "docker.io/mcp/filesystem:1.0.2", "/project"]
  env = {
    LOG_LEVEL = "info"
  }
  registry = "io.github.modelcontextprotocol/filesystem@1.0.2"
}
`},
		{name: "remote with headers", args: []string{"hybrid", "--from-registry", "io.modelcontextprotocol.anonymous/hybrid-mcp", "--remote", "1", "-H", "x-api-key: k-s3cr3t", "-H", "X-Region: eu-west-1"},
			block: `server "hybrid" {
  transport = "http"
  url       = "https://mcp.anonymous.modelcontextprotocol.io/http"
  headers = {
    X-API-Key = secret("<SECRET:X-API-Key>")
    X-Region  = "eu-west-1"
  }
  registry = "io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0"
}
`, secrets: map[string]string{"X-API-Key": "k-s3cr3t"}},
		{name: "sse by transport", args: []string{"hybrid", "--from-registry", "io.modelcontextprotocol.anonymous/hybrid-mcp", "-t", "sse"},
			block: `server "hybrid" {
  transport = "sse"
  url       = "https://mcp.anonymous.modelcontextprotocol.io/sse"
  registry  = "io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0"
}
`},
		{name: "URL and header variables", args: []string{"tenant", "--from-registry", "io.example.mcphost/tenant-api", "-e", "tenant=acme", "-e", "token=t0k-s3cr3t"},
			block: `server "tenant" {
  transport = "http"
  url       = "https://acme.api.example.com/mcp"
  headers = {
    Authorization = secret("<SECRET:Authorization>")
  }
  registry = "io.example.mcphost/tenant-api@2.1.0"
}
`, secrets: map[string]string{"Authorization": "Bearer t0k-s3cr3t"}},
		{name: "a composed secret cannot be read from the environment", args: []string{"--from-registry", "io.example.mcphost/tenant-api", "-e", "tenant=acme"},
			err: "the header Authorization: its value \"Bearer {token}\" joins text and {token}"},
		{name: "a required input missing", args: []string{"--from-registry", "io.github.joelverhagen/knapcode-samplemcpserver"},
			err: "the environment variable WEATHER_CHOICES is required: Comma separated list of weather descriptions to randomly select.; give it with -e WEATHER_CHOICES=VALUE"},
		{name: "a choice not offered", args: []string{"--from-registry", "io.modelcontextprotocol.anonymous/hybrid-mcp", "-e", "mode=remote"},
			err: "the argument mode takes one of local, cached, proxy"},
		{name: "an unknown input", args: []string{"--from-registry", "io.github.example/weather-mcp", "-e", "WEATHER_UNIT=kelvin"},
			err: "no input of the server is named by -e WEATHER_UNIT"},
		{name: "not in the registry", args: []string{"--from-registry", "io.github.nobody/none"},
			err: "no server io.github.nobody/none in "},
		{name: "mcpb", args: []string{"--from-registry", "io.modelcontextprotocol/text-editor"},
			err: `mcphost cannot install the package type "mcpb"`},
		{name: "a command too", args: []string{"x", "--from-registry", "io.github.example/weather-mcp", "--", "npx"},
			err: "a server from a registry takes no command or URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRegistryEnv(t)
			args := append([]string{"server", "add", "--registry", r.reg.URL}, tc.args...)
			err := r.run(args...)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error: got %v\nwant %s", err, tc.err)
				}
				if r.local() != "" {
					t.Errorf("written after an error:\n%s", r.local())
				}
				return
			}
			if err != nil {
				t.Fatal(err, r.stderr.String())
			}
			got := r.local()
			want := tc.block
			for key, value := range tc.secrets {
				name := registrySecretName(strings.Fields(want)[1][1:len(strings.Fields(want)[1])-1], r.env[config.EnvLocalConfig], key)
				want = strings.ReplaceAll(want, "<SECRET:"+key+">", name)
				b, err := os.ReadFile(filepath.Join(r.secretsDir(), name))
				if err != nil || string(b) != value {
					t.Errorf("secret %s: %q, %v", key, b, err)
				}
				for _, where := range []string{got, r.stdout.String(), r.stderr.String()} {
					if strings.Contains(where, value) {
						t.Errorf("the secret of %s is shown or written:\n%s", key, where)
					}
				}
			}
			if got != want {
				t.Errorf("block:\n%s\nwant:\n%s", got, want)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(r.stdout.String(), w) {
					t.Errorf("stdout: no %q in\n%s", w, r.stdout.String())
				}
			}
		})
	}
}

// TestRegistryServerApproval: a server added from a registry is not
// approved (not started) until config approve, which shows its registry.
func TestRegistryServerApproval(t *testing.T) {
	r := newRegistryEnv(t)
	r.env[mcpregistry.EnvURL] = r.reg.URL
	if err := r.run("server", "add", "-s", "user", "--from-registry", "io.github.example/weather-mcp", "-e", "WEATHER_API_KEY=wk-s3cr3t"); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	load := func() *config.Server {
		cfg, diags := config.Load(&config.LoadOptions{LookupEnv: func(k string) (string, bool) { v, ok := r.env[k]; return v, ok }, WorkDir: r.dir})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		return cfg.Server("weather-mcp")
	}
	if s := load(); s == nil || s.Approved || s.Origin.Scope != config.ScopeUser {
		t.Fatalf("before approval: %+v", s)
	}
	if err := r.run("config", "approve", "weather-mcp"); err == nil {
		t.Fatal("approved without a terminal nor --yes")
	}
	if !strings.Contains(r.stderr.String(), "registry: io.github.example/weather-mcp@0.5.0 (installed from an MCP Registry)") {
		t.Errorf("approve does not show the registry:\n%s", r.stderr.String())
	}
	if err := r.run("config", "approve", "--yes", "weather-mcp"); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	s := load()
	if !s.Approved || s.Env["WEATHER_API_KEY"] != "wk-s3cr3t" {
		t.Fatalf("after approval: approved %v", s.Approved)
	}
	if strings.Contains(r.stderr.String()+r.stdout.String(), "wk-s3cr3t") {
		t.Error("approve shows the secret")
	}
}

// TestRegistryProjectScope: a project file gets env() for a secret, and
// refuses one given on the command line.
func TestRegistryProjectScope(t *testing.T) {
	r := newRegistryEnv(t)
	os.MkdirAll(filepath.Join(r.dir, ".git"), 0o755)
	r.env[mcpregistry.EnvURL] = r.reg.URL
	err := r.run("server", "add", "-s", "project", "--from-registry", "io.github.example/weather-mcp", "-e", "WEATHER_API_KEY=wk-s3cr3t")
	if err == nil || !strings.Contains(err.Error(), "a project file is shared") {
		t.Fatalf("got %v", err)
	}
	if err := r.run("server", "add", "-s", "project", "--from-registry", "io.github.example/weather-mcp"); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	b, _ := os.ReadFile(filepath.Join(r.dir, config.ProjectFileName))
	if !strings.Contains(string(b), `WEATHER_API_KEY = env("WEATHER_API_KEY")`) {
		t.Errorf("project file:\n%s", b)
	}
}

// TestRegistryPrompt: on a terminal, a required input is asked for (a
// secret through the no-echo reader, never shown), a wrong choice again.
func TestRegistryPrompt(t *testing.T) {
	var out bytes.Buffer
	in := &registryInputs{given: map[string]string{}, headers: map[string]string{}, used: map[string]bool{}, interactive: true,
		ask: &inputPrompter{in: bufio.NewReader(strings.NewReader("redis2\nredis\n")), out: &out, readSecret: func() (string, error) { return "pw-s3cr3t", nil }}}
	secret := mcpregistry.Need{Key: "DB_PASSWORD", Kind: mcpregistry.KindEnv, Input: mcpregistry.Input{IsRequired: true, IsSecret: true, Description: "Database password"}}
	a, ok, err := in.resolve(secret)
	if err != nil || !ok || a.Value != "pw-s3cr3t" {
		t.Fatalf("secret: %+v %v %v", a, ok, err)
	}
	choice := mcpregistry.Need{Key: "db_type", Kind: mcpregistry.KindVariable, In: `argument "e"`, Input: mcpregistry.Input{IsRequired: true, Choices: []string{"postgres", "redis"}}}
	a, ok, err = in.resolve(choice)
	if err != nil || !ok || a.Value != "redis" {
		t.Fatalf("choice: %+v %v %v", a, ok, err)
	}
	got := out.String()
	for _, want := range []string{"environment variable DB_PASSWORD: Database password", "DB_PASSWORD [secret, not shown]: ", "db_type [one of postgres, redis]: ", "takes one of postgres, redis"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "pw-s3cr3t") {
		t.Error("the secret is shown")
	}
	// An optional input is not asked for.
	if _, ok, _ := in.resolve(mcpregistry.Need{Key: "PORT", Kind: mcpregistry.KindEnv}); ok {
		t.Error("an optional input was asked for")
	}
}

// TestRegistryBlockName: the block name derived from a registry name.
func TestRegistryBlockName(t *testing.T) {
	for in, want := range map[string]string{
		"io.github.user/weather":                  "weather",
		"io.github.user/weather.mcp":              "weather-mcp",
		"io.github.user/--x__y..z":                "x-y-z",
		"com.example/" + strings.Repeat("a", 100): strings.Repeat("a", config.MaxServerNameLen),
	} {
		if got := registryBlockName(in); got != want || !config.ValidServerName(got) {
			t.Errorf("%s: %q", in, got)
		}
	}
}

// TestRegistryStatus: a deleted version is not installed; a deprecated one
// is, with a warning.
func TestRegistryStatus(t *testing.T) {
	for _, tc := range []struct{ status, err, warn string }{
		{"deleted", "is marked deleted", ""},
		{"deprecated", "", "warning: io.example.mcphost/old 1.0.0 is deprecated"},
	} {
		r := newRegistryEnv(t)
		status := tc.status
		r.reg.Override = func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, `{"server":{"name":"io.example.mcphost/old","description":"d","version":"1.0.0","remotes":[{"type":"sse","url":"https://old.example.com/sse"}]},"_meta":{"io.modelcontextprotocol.registry/official":{"status":%q,"isLatest":true}}}`, status)
		}
		err := r.run("server", "add", "--registry", r.reg.URL, "--from-registry", "io.example.mcphost/old")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v", tc.status, err)
			}
			continue
		}
		if err != nil || !strings.Contains(r.stderr.String(), tc.warn) {
			t.Errorf("%s: %v\n%s", tc.status, err, r.stderr.String())
		}
	}
}

// TestRegistryAddTwice: adding a server of a name already in the file
// fails before its secret is stored: the first one's stays.
func TestRegistryAddTwice(t *testing.T) {
	r := newRegistryEnv(t)
	r.env[mcpregistry.EnvURL] = r.reg.URL
	add := func(key string) error {
		return r.run("server", "add", "brave", "--from-registry", "io.modelcontextprotocol.anonymous/brave-search", "-e", "BRAVE_API_KEY="+key)
	}
	if err := add("first-key"); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if err := add("second-key"); err == nil || !strings.Contains(err.Error(), "already in") {
		t.Fatalf("second add: %v", err)
	}
	name := registrySecretName("brave", r.env[config.EnvLocalConfig], "BRAVE_API_KEY")
	if b, err := os.ReadFile(filepath.Join(r.secretsDir(), name)); err != nil || string(b) != "first-key" {
		t.Fatalf("the first server's secret: %q %v", b, err)
	}
}

// TestRegistryUserApprovalEverywhere: a user-scope registry server
// approved in one directory is approved in every other (a desktop client
// starts mcphost serve anywhere); a local-scope one stays approved in its
// own directory only.
func TestRegistryUserApprovalEverywhere(t *testing.T) {
	r := newRegistryEnv(t)
	delete(r.env, config.EnvLocalConfig) // the local file of each directory
	r.env[mcpregistry.EnvURL] = r.reg.URL
	dirA, dirB := filepath.Join(r.dir, "a"), filepath.Join(r.dir, "b")
	os.MkdirAll(dirA, 0o755)
	os.MkdirAll(dirB, 0o755)
	r.dir = dirA
	if err := r.run("server", "add", "-s", "user", "--from-registry", "io.github.example/weather-mcp", "-e", "WEATHER_API_KEY=wk-s3cr3t"); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if err := r.run("server", "add", "-s", "local", "other", "--from-registry", "io.modelcontextprotocol.anonymous/brave-search", "-e", "BRAVE_API_KEY=bsk-s3cr3t"); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	// An approval of the same name in dir A's local file (from before
	// approvals of user-scope servers went to the user file) would win over
	// the user file's there: it is updated too.
	localA := config.Locate(func(k string) (string, bool) { v, ok := r.env[k]; return v, ok }, dirA).Local
	if err := config.WriteApprovals(localA, map[string]string{"weather-mcp": "sha256:" + strings.Repeat("0", 64)}); err != nil {
		t.Fatal(err)
	}
	if err := r.run("config", "approve", "--yes", "weather-mcp", "other"); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	load := func(dir, name string) *config.Server {
		cfg, diags := config.Load(&config.LoadOptions{LookupEnv: func(k string) (string, bool) { v, ok := r.env[k]; return v, ok }, WorkDir: dir})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		return cfg.Server(name)
	}
	for _, dir := range []string{dirA, dirB} {
		if s := load(dir, "weather-mcp"); s == nil || !s.Approved {
			t.Errorf("in %s: the user-scope registry server is not approved: %+v", dir, s)
		}
	}
	if s := load(dirA, "other"); s == nil || !s.Approved {
		t.Errorf("the local registry server is not approved in its directory: %+v", s)
	}
	// mcphost servers in dir B reports it approved (not "is not approved").
	r.dir = dirB
	_ = r.run("servers")
	if out := r.stdout.String() + r.stderr.String(); strings.Contains(out, "not approved") {
		t.Errorf("mcphost servers in another directory:\n%s", out)
	}
}
