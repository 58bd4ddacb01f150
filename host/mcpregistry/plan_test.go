package mcpregistry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/mcpregistry"
)

// examples returns the servers of testdata/servers.json by NAME@VERSION.
func examples(t testing.TB) map[string]*mcpregistry.ServerJSON {
	t.Helper()
	b, err := os.ReadFile("testdata/servers.json")
	if err != nil {
		t.Fatal(err)
	}
	var list mcpregistry.ServerList
	if err := mcpregistry.Decode(b, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcpregistry.ServerJSON{}
	for i := range list.Servers {
		s := &list.Servers[i].Server
		out[s.Name+"@"+s.Version] = s
	}
	return out
}

// answers is a Resolver from a map: "KEY" → value, "KEY" → "env:NAME" for
// a reference to the environment.
func answers(m map[string]string) mcpregistry.Resolver {
	return func(n mcpregistry.Need) (mcpregistry.Answer, bool, error) {
		v, ok := m[n.Key]
		if name, env := strings.CutPrefix(v, "env:"); env {
			return mcpregistry.Answer{Env: name}, true, nil
		}
		return mcpregistry.Answer{Value: v}, ok, nil
	}
}

// show renders a plan on one line: secret values as <secret:…>, env
// references as env(NAME).
func show(p *mcpregistry.Plan) string {
	val := func(v mcpregistry.Value) string {
		s := v.Text
		if v.FromEnv != "" {
			s = "env(" + v.FromEnv + ")"
		}
		if v.Secret {
			s = "<secret:" + s + ">"
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", p.Registry, p.Transport)
	if p.Command != "" {
		fmt.Fprintf(&b, " | %s", p.Command)
		for _, a := range p.Args {
			b.WriteString(" " + val(a))
		}
	}
	if p.URL.Text != "" || p.URL.FromEnv != "" {
		b.WriteString(" | " + val(p.URL))
	}
	for _, m := range []map[string]mcpregistry.Value{p.Env, p.Headers} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " | %s=%s", k, val(m[k]))
		}
	}
	return b.String()
}

// TestPlan: each package type becomes its runner's command, a remote its
// URL and headers; inputs come from the answers, else their defaults.
func TestPlan(t *testing.T) {
	t.Parallel()
	ex := examples(t)
	for _, tc := range []struct {
		name    string
		server  string
		choice  mcpregistry.Choice
		answers map[string]string
		want    string
		err     string
	}{
		{name: "npm with a secret", server: "io.modelcontextprotocol.anonymous/brave-search@1.0.2",
			answers: map[string]string{"BRAVE_API_KEY": "bsk-123"},
			want:    "io.modelcontextprotocol.anonymous/brave-search@1.0.2 stdio | npx -y @modelcontextprotocol/server-brave-search@1.0.2 | BRAVE_API_KEY=<secret:bsk-123>"},
		{name: "npm, secret from the environment", server: "io.modelcontextprotocol.anonymous/brave-search@1.0.1",
			answers: map[string]string{"BRAVE_API_KEY": "env:BRAVE_API_KEY"},
			want:    "io.modelcontextprotocol.anonymous/brave-search@1.0.1 stdio | npx -y @modelcontextprotocol/server-brave-search@1.0.1 | BRAVE_API_KEY=<secret:env(BRAVE_API_KEY)>"},
		{name: "npm, a required secret missing", server: "io.modelcontextprotocol.anonymous/brave-search@1.0.2",
			err: "the environment variable BRAVE_API_KEY is required: Brave Search API Key"},
		{name: "npm with a positional default", server: "io.github.modelcontextprotocol/filesystem@1.0.2",
			want: "io.github.modelcontextprotocol/filesystem@1.0.2 stdio | npx -y @modelcontextprotocol/server-filesystem@1.0.2 /Users/username/Desktop | LOG_LEVEL=info"},
		{name: "npm, positional given", server: "io.github.modelcontextprotocol/filesystem@1.0.2",
			answers: map[string]string{"target_dir": "/src", "LOG_LEVEL": "debug"},
			want:    "io.github.modelcontextprotocol/filesystem@1.0.2 stdio | npx -y @modelcontextprotocol/server-filesystem@1.0.2 /src | LOG_LEVEL=debug"},
		{name: "oci with variables", server: "io.github.modelcontextprotocol/filesystem@1.0.2", choice: mcpregistry.Choice{Package: 2},
			answers: map[string]string{"source_path": "/home/u/src"},
			want:    "io.github.modelcontextprotocol/filesystem@1.0.2 stdio | docker run -i --rm --mount type=bind,src=/home/u/src,dst=/project -e LOG_LEVEL docker.io/mcp/filesystem:1.0.2 /project | LOG_LEVEL=info"},
		{name: "oci, a required variable missing", server: "io.github.modelcontextprotocol/filesystem@1.0.2", choice: mcpregistry.Choice{Package: 2},
			err: `the variable source_path is required (in argument "mount"): Source path on host`},
		{name: "oci with named arguments", server: "io.github.example/database-manager@3.1.0",
			answers: map[string]string{"db_type": "postgres", "database_name": "shop", "DB_USERNAME": "app", "DB_PASSWORD": "pw", "port": "5432"},
			want:    "io.github.example/database-manager@3.1.0 stdio | docker run -i --rm --network host -e DB_TYPE=postgres -e DB_USERNAME -e DB_PASSWORD -e SSL_MODE docker.io/example/database-manager-mcp:3.1.0 --host localhost --port 5432 shop | DB_PASSWORD=<secret:pw> | DB_USERNAME=app | SSL_MODE=prefer"},
		{name: "pypi", server: "io.github.example/weather-mcp@0.5.0",
			answers: map[string]string{"WEATHER_API_KEY": "wk"},
			want:    "io.github.example/weather-mcp@0.5.0 stdio | uvx weather-mcp-server==0.5.0 | WEATHER_API_KEY=<secret:wk> | WEATHER_UNITS=celsius"},
		{name: "nuget with package arguments", server: "io.github.joelverhagen/knapcode-samplemcpserver@0.4.0-beta",
			answers: map[string]string{"WEATHER_CHOICES": "sunny,rainy"},
			want:    "io.github.joelverhagen/knapcode-samplemcpserver@0.4.0-beta stdio | dnx Knapcode.SampleMcpServer@0.4.0-beta --yes -- mcp start | WEATHER_CHOICES=sunny,rainy"},
		{name: "the first package by default", server: "io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0",
			want: "io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0 stdio | npx -y @example/hybrid-mcp-server@1.5.0 --mode local"},
		{name: "remote with headers", server: "io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0", choice: mcpregistry.Choice{Remote: 1},
			answers: map[string]string{"X-API-Key": "k-1"},
			want:    "io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0 streamable-http | https://mcp.anonymous.modelcontextprotocol.io/http | X-API-Key=<secret:k-1> | X-Region=us-east-1"},
		{name: "remote by transport", server: "io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0", choice: mcpregistry.Choice{Transport: "sse"},
			want: "io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0 sse | https://mcp.anonymous.modelcontextprotocol.io/sse"},
		{name: "http is streamable-http", server: "io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0", choice: mcpregistry.Choice{Transport: "http"},
			answers: map[string]string{"X-API-Key": "k-1", "X-Region": "eu-west-1"},
			want:    "io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0 streamable-http | https://mcp.anonymous.modelcontextprotocol.io/http | X-API-Key=<secret:k-1> | X-Region=eu-west-1"},
		{name: "remote with URL and header variables", server: "io.example.mcphost/tenant-api@2.1.0",
			answers: map[string]string{"tenant": "acme", "token": "t0k"},
			want:    "io.example.mcphost/tenant-api@2.1.0 streamable-http | https://acme.api.example.com/mcp | Authorization=<secret:Bearer t0k>"},
		{name: "a composed value cannot come from the environment", server: "io.example.mcphost/tenant-api@2.1.0",
			answers: map[string]string{"tenant": "acme", "token": "env:TOKEN"},
			err:     `the header Authorization: its value "Bearer {token}" joins text and {token}: give {token} (-e token=VALUE) or the whole value: a value composed of text and a variable taken from the environment`},
		{name: "mcpb unsupported", server: "io.modelcontextprotocol/text-editor@1.0.2",
			err: `mcphost cannot install the package type "mcpb"; choose a remote (--remote N) or another package (--package N)`},
		{name: "no such package", server: "io.github.example/weather-mcp@0.5.0", choice: mcpregistry.Choice{Package: 2},
			err: "io.github.example/weather-mcp has 1 package(s): no package 2"},
		{name: "no remote", server: "io.github.example/weather-mcp@0.5.0", choice: mcpregistry.Choice{Transport: "sse"},
			err: "io.github.example/weather-mcp has no sse remote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ex[tc.server]
			if s == nil {
				t.Fatalf("no example %s", tc.server)
			}
			pkg, remote, err := mcpregistry.Choose(s, tc.choice)
			var plan *mcpregistry.Plan
			if err == nil && pkg != nil {
				plan, err = mcpregistry.PlanPackage(s, pkg, answers(tc.answers))
			} else if err == nil {
				plan, err = mcpregistry.PlanRemote(s, remote, answers(tc.answers))
			}
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error: got %v\nwant %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := show(plan); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestMissingInputError is classified by type.
func TestMissingInputError(t *testing.T) {
	t.Parallel()
	s := examples(t)["io.github.example/weather-mcp@0.5.0"]
	_, err := mcpregistry.PlanPackage(s, &s.Packages[0], answers(nil))
	var m *mcpregistry.MissingInputError
	if !errors.As(err, &m) || m.Need.Key != "WEATHER_API_KEY" || !m.Need.Input.IsSecret {
		t.Fatalf("got %v", err)
	}
}

// FuzzDecode decodes arbitrary answers as a list and as a server, and
// plans every package and remote of what decodes: nothing panics.
func FuzzDecode(f *testing.F) {
	b, err := os.ReadFile("testdata/servers.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	var list struct{ Servers []json.RawMessage }
	json.Unmarshal(b, &list)
	for _, s := range list.Servers {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"server":{"name":"a/b","remotes":[{"type":"sse","url":"{x}{x}","variables":{"x":{"value":"{x}"}}}]}}`))
	f.Add([]byte(`{"server":{"name":"a/b","packages":[{"registryType":"oci","identifier":"","runtimeArguments":[{"type":"named"}]}]}}`))
	resolve := func(n mcpregistry.Need) (mcpregistry.Answer, bool, error) {
		switch len(n.Key) % 3 {
		case 0:
			return mcpregistry.Answer{Value: "v"}, true, nil
		case 1:
			return mcpregistry.Answer{Env: "E"}, true, nil
		}
		return mcpregistry.Answer{}, false, nil
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var l mcpregistry.ServerList
		if mcpregistry.Decode(data, &l) == nil {
			for i := range l.Servers {
				planAll(&l.Servers[i].Server, resolve)
			}
		}
		var r mcpregistry.ServerResponse
		if mcpregistry.Decode(data, &r) == nil {
			planAll(&r.Server, resolve)
		}
	})
}

func planAll(s *mcpregistry.ServerJSON, resolve mcpregistry.Resolver) {
	for i := range s.Packages {
		mcpregistry.PlanPackage(s, &s.Packages[i], resolve)
	}
	for i := range s.Remotes {
		mcpregistry.PlanRemote(s, &s.Remotes[i], resolve)
	}
	mcpregistry.Choose(s, mcpregistry.Choice{})
	_ = mcpregistry.Printable(s.Description, 10)
}
