package bench

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// The gateways users pick instead of mcphost, on the same paths, in one
// interleaved run (each round runs every peer once): a go-sdk client
// (2025-11-25, with a session: every peer serves that era) over streamable
// HTTP → the gateway → the demo server's echo tool, on stdio (PeersStdio)
// or over streamable HTTP (PeersHTTP), and the client calling the server
// directly over streamable HTTP for scale. scripts/bench-peers.sh installs
// the peers, at pinned versions, into test/bench/peers (BENCH_PEERS names
// another directory); a peer that is not installed is skipped, unless
// BENCH_PEERS_REQUIRED=1. Metrics: those of concurrentCalls, the peer being
// the process in the middle (its own CPU and RSS; the demo server it runs
// is the upstream server).

// peersDir is where scripts/bench-peers.sh installed the peers.
func peersDir() string {
	if d := os.Getenv("BENCH_PEERS"); d != "" {
		return d
	}
	return "peers" // test/bench/peers: the benchmarks run in their package's directory
}

// peerBin is an installed peer's executable, or skips (fails with
// BENCH_PEERS_REQUIRED=1) when it is not there.
func peerBin(b *testing.B, rel string) string {
	b.Helper()
	path, err := filepath.Abs(filepath.Join(peersDir(), rel))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("BENCH_PEERS_REQUIRED") == "1" {
			b.Fatalf("peer %s is not installed (scripts/bench-peers.sh): %v", rel, err)
		}
		b.Skipf("peer %s is not installed (scripts/bench-peers.sh installs it): %v", rel, err)
	}
	return path
}

// stdioPeer starts a gateway listening on port in front of the stdio demo
// server and returns its pid and its MCP endpoint.
type stdioPeer struct {
	name  string
	start func(b *testing.B, port int) (pid int, url string)
}

var stdioPeers = []stdioPeer{
	{"mcphost", func(b *testing.B, port int) (int, string) {
		pid := listen(b, port, gatewayEnv(b, b.TempDir()),
			mcphostPath(), "--config", gatewayConfig(b, 1), "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth")
		return pid, fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	}},
	// punkpeye's mcp-proxy (TypeScript): a session of its own, and a server
	// process, per client session.
	{"mcp-proxy", func(b *testing.B, port int) (int, string) {
		bin := peerBin(b, "node_modules/.bin/mcp-proxy")
		pid := listen(b, port, nil, bin, "--host", "127.0.0.1", "--port", fmt.Sprint(port), "--server", "stream", "--", demoPath())
		return pid, fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	}},
	// supergateway, stdio → streamable HTTP. --stateful: one server process
	// per client session (stateless, it starts one per request).
	{"supergateway", func(b *testing.B, port int) (int, string) {
		bin := peerBin(b, "node_modules/.bin/supergateway")
		pid := listen(b, port, nil, bin, "--stdio", demoPath(), "--outputTransport", "streamableHttp", "--stateful",
			"--port", fmt.Sprint(port), "--logLevel", "none")
		return pid, fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	}},
}

// BenchmarkPeersStdio8 is client → gateway (streamable HTTP in front) →
// stdio demo server for each peer, and the client → the demo server over
// streamable HTTP, 8 concurrent callers.
func BenchmarkPeersStdio8(b *testing.B) { peersStdio(b, 8) }

// BenchmarkPeersStdio1 is BenchmarkPeersStdio8 with one caller.
func BenchmarkPeersStdio1(b *testing.B) { peersStdio(b, 1) }

func peersStdio(b *testing.B, callers int) {
	b.Run("direct", func(b *testing.B) { httpDirect(b, callers) })
	for _, p := range stdioPeers {
		b.Run(p.name, func(b *testing.B) {
			pid, url := p.start(b, testbin.FreePort(b))
			cs := httpSession(b, url)
			tool := echoTool(b, cs)
			call(b, cs, tool) // the peer has started its server
			cpu := map[string]int{midCPU: pid}
			if servers := demoServers(b, pid); len(servers) == 1 {
				cpu[srvCPU] = servers[0]
			}
			concurrentOn(b, []target{{cs, tool}}, callers, cpu)
		})
	}
}

// httpPeer starts a gateway listening on port in front of the demo server
// at upstream (streamable HTTP) and returns its pid and its MCP endpoint.
type httpPeer struct {
	name  string
	start func(b *testing.B, port int, upstream string) (pid int, url string)
}

var httpPeers = []httpPeer{
	{"mcphost", func(b *testing.B, port int, upstream string) (int, string) {
		dir := b.TempDir()
		cfg := filepath.Join(dir, "gateway.hcl")
		src := fmt.Sprintf("server \"demo\" {\n  transport = \"http\"\n  url = %q\n}\npermissions {\n  allow = [\"mcp__demo\"]\n}\n", upstream)
		if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
		pid := listen(b, port, gatewayEnv(b, dir),
			mcphostPath(), "--config", cfg, "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth")
		return pid, fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	}},
	// ToolHive's `thv proxy`: a transparent HTTP proxy in front of one
	// server (no container: the target is a URL).
	{"thv-proxy", func(b *testing.B, port int, upstream string) (int, string) {
		bin := peerBin(b, "bin/thv")
		dir := b.TempDir()
		env := append(toolhiveEnv(dir), "TOOLHIVE_DOCKER_SOCKET="+dockerPing(b, dir))
		pid := listen(b, port, env, bin, "proxy", "demo", "--host", "127.0.0.1", "--port", fmt.Sprint(port),
			"--target-uri", strings.TrimSuffix(upstream, "/mcp"))
		return pid, fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	}},
	// ToolHive's Virtual MCP server, with a static backend (no ToolHive
	// group, no containers, no Kubernetes).
	{"vmcp", func(b *testing.B, port int, upstream string) (int, string) {
		bin := peerBin(b, "bin/vmcp")
		dir := b.TempDir()
		cfg := filepath.Join(dir, "vmcp.yaml")
		src := fmt.Sprintf(`name: bench
groupRef: bench
incomingAuth:
  type: anonymous
outgoingAuth:
  source: inline
  default:
    type: unauthenticated
backends:
  - name: demo
    url: %q
    transport: streamable-http
aggregation:
  conflictResolution: prefix
  conflictResolutionConfig:
    prefixFormat: "{workload}_"
`, upstream)
		if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
		pid := listen(b, port, toolhiveEnv(dir), bin, "serve", "--config", cfg, "--host", "127.0.0.1", "--port", fmt.Sprint(port))
		return pid, fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	}},
}

// dockerPing serves, on a unix socket in dir, the one Docker API request
// that thv makes of every command before running it (GET /_ping: a
// container runtime is there), and returns the socket's path. `thv proxy`
// itself starts no container: there is no container runtime on the
// benchmarks' machine, and none is used.
func dockerPing(b *testing.B, dir string) string {
	b.Helper()
	path := filepath.Join(dir, "docker.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("API-Version", "1.44")
		if strings.HasSuffix(r.URL.Path, "/_ping") {
			io.WriteString(w, "OK")
			return
		}
		http.NotFound(w, r)
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return path
}

// toolhiveEnv keeps a ToolHive binary's state and configuration in dir and
// its update check and usage metrics off.
func toolhiveEnv(dir string) []string {
	return []string{"HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"), "XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"TOOLHIVE_SKIP_UPDATE_CHECK=true", "TOOLHIVE_USAGE_METRICS_ENABLED=false"}
}

// BenchmarkPeersHTTP8 is client → gateway → the demo server over streamable
// HTTP (with sessions) for each peer, and the client → the server directly,
// 8 concurrent callers.
func BenchmarkPeersHTTP8(b *testing.B) { peersHTTP(b, 8) }

// BenchmarkPeersHTTP1 is BenchmarkPeersHTTP8 with one caller.
func BenchmarkPeersHTTP1(b *testing.B) { peersHTTP(b, 1) }

func peersHTTP(b *testing.B, callers int) {
	b.Run("direct", func(b *testing.B) { httpDirect(b, callers) })
	for _, p := range httpPeers {
		b.Run(p.name, func(b *testing.B) {
			up := testbin.FreePort(b)
			srv := listen(b, up, nil, demoPath(), "-http", fmt.Sprintf("127.0.0.1:%d", up))
			pid, url := p.start(b, testbin.FreePort(b), fmt.Sprintf("http://127.0.0.1:%d/mcp", up))
			cs := httpSession(b, url)
			tool := echoTool(b, cs)
			concurrentOn(b, []target{{cs, tool}}, callers, map[string]int{midCPU: pid, srvCPU: srv})
		})
	}
}
