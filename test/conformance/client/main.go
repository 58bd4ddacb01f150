// Command client is mcphost's client for the official MCP conformance suite
// (`make conformance`). The suite runs it once per scenario with the mock
// server's URL as its argument, MCP_CONFORMANCE_SCENARIO naming the
// scenario and MCP_CONFORMANCE_CONTEXT carrying credentials for some.
//
// Everything goes through mcphost's real code paths: an HCL configuration is
// written and loaded (config), a Host is started on it (connections, the
// built-in OAuth client or an auth plugin, the registry, permissions), and
// tools are listed and called by their registry names. The scenario only
// chooses the user's actions (which tools to call, with what arguments;
// logging in through the authenticate pseudo-tool when the server asks) and
// which credentials go into the configuration; it never changes protocol
// behaviour.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/registry"
)

const server = "conf"

func main() {
	if len(os.Args) != 2 {
		log.Fatalf("usage: %s SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)", os.Args[0])
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var cc map[string]any
	if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
		if err := json.Unmarshal([]byte(s), &cc); err != nil {
			log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[1], scenario, cc); err != nil {
		log.Fatalf("scenario %s: %v", scenario, err)
	}
}

func str(cc map[string]any, k string) string {
	s, _ := cc[k].(string)
	return s
}

// configFor writes the configuration a user would write for this server:
// the credentials the scenario hands out go where a user would put them.
func configFor(dir, serverURL, scenario string, cc map[string]any) (string, error) {
	var b strings.Builder
	q := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	fmt.Fprintf(&b, "server %q {\n  transport = \"http\"\n  url = %s\n", server, q(serverURL))
	if strings.HasPrefix(scenario, "auth/") {
		switch {
		case scenario == "auth/enterprise-managed-authorization":
			fmt.Fprintf(&b, "  auth \"xaa\" {\n    idp = \"corp\"\n    client_id = %s\n    client_secret = %s\n    allow_loopback = true\n  }\n", q(str(cc, "client_id")), q(str(cc, "client_secret")))
		case str(cc, "private_key_pem") != "":
			fmt.Fprintf(&b, "  oauth {\n    grant = \"client_credentials\"\n    client_id = %s\n    private_key = %s\n    signing_algorithm = %s\n    allow_loopback = true\n  }\n",
				q(str(cc, "client_id")), q(str(cc, "private_key_pem")), q(str(cc, "signing_algorithm")))
		case str(cc, "valid_jwt") != "":
			fmt.Fprintf(&b, "  oauth {\n    grant = \"jwt_bearer\"\n    client_id = %s\n    assertion = %s\n    allow_loopback = true\n  }\n", q(str(cc, "client_id")), q(str(cc, "valid_jwt")))
		case strings.HasPrefix(scenario, "auth/client-credentials"):
			fmt.Fprintf(&b, "  oauth {\n    grant = \"client_credentials\"\n    client_id = %s\n    client_secret = %s\n    allow_loopback = true\n  }\n", q(str(cc, "client_id")), q(str(cc, "client_secret")))
		case str(cc, "client_id") != "":
			fmt.Fprintf(&b, "  oauth {\n    client_id = %s\n    client_secret = %s\n    allow_loopback = true\n  }\n", q(str(cc, "client_id")), q(str(cc, "client_secret")))
		default:
			// Registration by client ID metadata document where the AS
			// supports it, else dynamic client registration.
			b.WriteString("  oauth {\n    client_metadata_url = \"https://conformance-test.local/client-metadata.json\"\n    allow_loopback = true\n  }\n")
		}
	}
	b.WriteString("}\n\npermissions {\n  allow = [\"mcp__conf__*\"]\n}\n")
	if scenario == "auth/enterprise-managed-authorization" {
		fmt.Fprintf(&b, "\nidp \"corp\" {\n  issuer = %s\n  client_id = %s\n  id_token = %s\n  allow_loopback = true\n}\n",
			q(str(cc, "idp_issuer")), q(str(cc, "idp_client_id")), q(str(cc, "idp_id_token")))
		// The plugin directory and the lock file `mcphost plugins lock`
		// wrote for it (scripts/conformance.sh): plugins start pinned.
		if pd := os.Getenv("MCPHOST_CONFORMANCE_PLUGIN_DIR"); pd != "" {
			fmt.Fprintf(&b, "\nsettings {\n  plugin_dir = %s\n  plugin_lock = %s\n}\n", q(pd), q(os.Getenv("MCPHOST_CONFORMANCE_PLUGIN_LOCK")))
		}
	}
	p := filepath.Join(dir, "mcphost.hcl")
	return p, os.WriteFile(p, []byte(b.String()), 0o600)
}

func run(ctx context.Context, serverURL, scenario string, cc map[string]any) error {
	dir, err := os.MkdirTemp("", "mcphost-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path, err := configFor(dir, serverURL, scenario, cc)
	if err != nil {
		return err
	}
	env := map[string]string{"MCPHOST_CONFIG_DIR": filepath.Join(dir, "config"), "HOME": dir}
	lookup := func(k string) (string, bool) {
		if v, ok := env[k]; ok {
			return v, true
		}
		return os.LookupEnv(k)
	}
	cfg, diags := config.Load(&config.LoadOptions{LookupEnv: lookup, WorkDir: dir, Files: []string{path}})
	if diags.HasErrors() {
		return fmt.Errorf("configuration: %s", diags.Error())
	}
	level := hclog.Warn
	if os.Getenv("MCPHOST_CONFORMANCE_DEBUG") != "" {
		level = hclog.Debug
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: "mcphost", Level: level, Output: os.Stderr})
	elicit := map[string]any{}
	if scenario == "sep-2322-client-request-state" {
		elicit = map[string]any{"confirmed": true}
	}
	h, err := host.New(cfg, &host.Options{
		Logger:    logger,
		LookupEnv: lookup,
		OutputDir: filepath.Join(dir, "out"),
		// The user accepts what servers ask, with the form's defaults.
		OnElicit: func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			logger.Debug("elicitation: accepting")
			return &mcp.ElicitResult{Action: "accept", Content: elicit}, nil
		},
		// The user's browser: follow the authorization URL, including the
		// authorization server's redirect to mcphost's loopback callback.
		PresentAuthURL: browse,
	})
	if err != nil {
		return err
	}
	defer h.Close()

	tools, err := listTools(ctx, h)
	if err != nil {
		return err
	}
	call := func(name string, args map[string]any) error {
		full := "mcp__" + server + "__" + registry.Sanitize(name)
		_, err := h.CallTool(ctx, full, args, nil)
		if errors.Is(err, conn.ErrNeedsAuth) {
			// The server wants a (new) login for this call, e.g. more scope:
			// the user logs in through the authenticate tool and calls again.
			if _, err := listTools(ctx, h); err != nil {
				return err
			}
			_, err = h.CallTool(ctx, full, args, nil)
		}
		var te *host.ToolError
		if errors.As(err, &te) {
			return nil // the tool ran and reported an error result
		}
		return err
	}
	switch scenario {
	case "initialize", "request-metadata", "json-schema-ref-no-deref":
		return nil
	case "tools_call":
		return call("add_numbers", map[string]any{"a": 5, "b": 3})
	case "elicitation-sep1034-client-defaults":
		return call("test_client_elicitation_defaults", map[string]any{})
	case "sse-retry":
		return call("test_reconnection", map[string]any{})
	case "json-schema-2020-12-preservation":
		for _, t := range tools {
			if t.Original == "json_schema_2020_12_tool" {
				return call("json_schema_echo", map[string]any{"schema": t.InputSchema})
			}
		}
		return errors.New("json_schema_2020_12_tool not listed")
	case "sep-2322-client-request-state":
		for _, n := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			if err := call(n, map[string]any{}); err != nil {
				log.Printf("%s: %v (expected for some cases)", n, err)
			}
		}
		return nil
	case "http-standard-headers":
		if len(tools) > 0 {
			call(tools[0].Original, map[string]any{})
		}
		if rs, _ := h.Resources(ctx, server); len(rs) > 0 {
			h.ReadResource(ctx, server, rs[0].URI)
		}
		if ps, _ := h.Prompts(ctx); len(ps) > 0 {
			h.GetPrompt(ctx, ps[0].Name, map[string]string{})
		}
		return nil
	case "http-custom-headers":
		calls, _ := cc["toolCalls"].([]any)
		for _, c := range calls {
			m, _ := c.(map[string]any)
			name, _ := m["name"].(string)
			args, _ := m["arguments"].(map[string]any)
			if args == nil {
				args = map[string]any{}
			}
			if err := call(name, args); err != nil {
				log.Printf("%s: %v", name, err)
			}
		}
		return nil
	case "http-invalid-tool-headers":
		for _, t := range tools {
			if err := call(t.Original, map[string]any{"region": "us-west1"}); err != nil {
				log.Printf("%s: %v", t.Original, err)
			}
		}
		return nil
	}
	if strings.HasPrefix(scenario, "auth/") {
		// The user calls the server's tool (the suite's servers have one).
		for _, t := range tools {
			if err := call(t.Original, map[string]any{}); err != nil {
				return err
			}
		}
		if len(tools) == 0 {
			return errors.New("no tools listed")
		}
		return nil
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}

// listTools lists the server's tools; if the server needs a login, the
// user calls the authenticate pseudo-tool and lists again.
func listTools(ctx context.Context, h *host.Host) ([]*registry.Tool, error) {
	for range 3 {
		tools, problems := h.Tools(ctx)
		var auth *registry.Tool
		for _, t := range tools {
			if h.IsAuthTool(ctx, t.Server, t.Original) {
				auth = t
			}
		}
		if auth == nil {
			if len(tools) == 0 && len(problems) > 0 {
				return nil, fmt.Errorf("%s", problems[0].Detail)
			}
			return tools, nil
		}
		if _, err := h.CallTool(ctx, auth.Name, map[string]any{}, nil); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("still not logged in after two logins")
}

// browse stands in for the user's browser.
func browse(ctx context.Context, authURL string) error {
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Printf("browser: %v", err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	return nil
}
