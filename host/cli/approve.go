package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/mcphost/mcphost/host/config"
)

// describeForApproval prints everything a project server's approval covers:
// what it runs, or where it connects and what it sends there. Values come
// as written: an env() call is shown as the call, since the environment is
// not read before approval.
func describeForApproval(w io.Writer, s *config.Server) {
	if s.Registry != "" {
		fmt.Fprintf(w, "  registry: %s (installed from an MCP Registry)\n", cleanLine(s.Registry))
	}
	if !s.IsRemote() {
		fmt.Fprintf(w, "  command: %q\n  args: %q\n", s.Command, s.Args)
		printMap(w, "env", s.Env)
		if len(s.InheritEnv) > 0 {
			fmt.Fprintf(w, "  inherit_env: %q\n", s.InheritEnv)
		}
		if s.EnvFile != "" {
			fmt.Fprintf(w, "  env_file: %s (its content as of now is covered: once it changes, the server needs approval again)\n", s.EnvFile)
		}
		if s.Cwd != "" {
			fmt.Fprintf(w, "  cwd: %s\n", s.Cwd)
		}
		return
	}
	fmt.Fprintf(w, "  transport: %s\n  url: %s\n", s.Transport, s.URL)
	printMap(w, "header", s.Headers)
	if len(s.HeadersHelper) > 0 {
		fmt.Fprintf(w, "  headers_helper: %q (run before each connect; its headers are sent)\n", s.HeadersHelper)
	}
	for _, f := range []struct{ name, v string }{
		{"ca_file", s.CAFile}, {"client_cert_file", s.ClientCertFile}, {"client_key_file", s.ClientKeyFile},
		{"tls_server_name", s.TLSServerName}, {"proxy_url", s.ProxyURL},
	} {
		if f.v != "" {
			fmt.Fprintf(w, "  %s: %s\n", f.name, f.v)
		}
	}
	if s.TLSInsecureSkipVerify {
		fmt.Fprintln(w, "  tls_insecure_skip_verify: true (certificates are not checked)")
	}
	if len(s.TransportOptions) > 0 {
		fmt.Fprintf(w, "  transport_options: %s\n", s.TransportOptions)
	}
	if s.OAuth != nil {
		fmt.Fprintln(w, "  oauth:")
		b, _ := json.Marshal(s.OAuth)
		var m map[string]any
		json.Unmarshal(b, &m)
		printAny(w, "   ", m)
	}
	if s.AuthScheme != "" {
		fmt.Fprintf(w, "  auth %q:\n", s.AuthScheme)
		var m map[string]any
		json.Unmarshal(s.AuthConfig, &m)
		printAny(w, "   ", m)
	}
}

func printMap(w io.Writer, what string, m map[string]string) {
	vals := make(map[string]any, len(m))
	for k, v := range m {
		vals[k] = v
	}
	printAny(w, "  "+what+" ", vals)
}

func printAny(w io.Writer, indent string, m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		if s, ok := v.(string); ok {
			fmt.Fprintf(w, "%s%s = %s\n", indent, keyText(k), describeValue(s))
			continue
		}
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "%s%s = %s\n", indent, keyText(k), b)
	}
}

// keyText is a key of a map shown for approval: as it is when clean, else
// quoted (a key from a registry's answer or a project file may carry
// terminal escapes that would rewrite the approval screen).
func keyText(k string) string {
	if k != "" && cleanLine(k) == k && !strings.ContainsAny(k, " \"") {
		return k
	}
	return fmt.Sprintf("%q", k)
}

// describeValue quotes a value, noting when it comes from the environment.
func describeValue(v string) string {
	if config.FromEnv(v) {
		return fmt.Sprintf("%q (from the environment, read once approved)", v)
	}
	return strings.TrimSpace(fmt.Sprintf("%q", v))
}
