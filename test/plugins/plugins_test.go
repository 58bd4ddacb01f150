//go:build unix

// Package plugins tests the plugin runtime end to end with the real plugin
// binaries built by `make build`: the transport-ws plugin in front of a real
// WebSocket MCP server, checksum pinning, one process per plugin, crash
// recovery and the handshake checks.
package plugins

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/plugins"
	"github.com/mcphost/mcphost/internal/demoserver"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
	"github.com/mcphost/mcphost/internal/testing/testbin"
	"github.com/mcphost/mcphost/internal/wsmcp"
)

var binDir string

func TestMain(m *testing.M) { os.Exit(testbin.Run(m, func(dir string) { binDir = dir })) }

// wsServer starts the demo server on WebSocket and returns its URL.
func wsServer(t *testing.T) string {
	t.Helper()
	port := testbin.FreePort(t)
	cmd := exec.Command(filepath.Join(binDir, "mcphost-demo"), "-ws", fmt.Sprintf("127.0.0.1:%d", port), "-name", "wsdemo")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	testbin.WaitListening(t, port)
	return fmt.Sprintf("ws://127.0.0.1:%d/mcp", port)
}

// lockedConfig writes a config file in dir with the test's plugin directory
// and a lock file, plus servers, and locks the plugins with the real CLI.
func lockedConfig(t testing.TB, dir, servers string) string {
	t.Helper()
	cfgPath := filepath.Join(dir, "cfg.hcl")
	src := fmt.Sprintf("settings {\n  plugin_dir  = %q\n  plugin_lock = %q\n}\npermissions {\n  default_mode = \"allow_all\"\n}\n", filepath.Join(binDir, "plugins"), filepath.Join(dir, "lock.hcl")) + servers
	if err := os.WriteFile(cfgPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := mcphost(t, dir, "--config", cfgPath, "plugins", "lock"); err != nil {
		t.Fatalf("plugins lock: %v\n%s", err, out)
	}
	return cfgPath
}

// setup writes a config with n ws servers and one stdio server, locks the
// plugins with the real CLI, and loads the result.
func setup(t *testing.T, n int) (*config.Config, string) {
	t.Helper()
	dir := t.TempDir()
	url := wsServer(t)
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "server \"ws%d\" {\n  transport = \"ws\"\n  url = \"%s?n=%d\"\n  transport_options = { ping_interval = \"5s\", read_limit = 1048576 }\n}\n", i, url, i) // distinct URLs: equal ones are deduplicated
	}
	fmt.Fprintf(&b, "server \"local\" {\n  command = %q\n}\n", filepath.Join(binDir, "mcphost-demo"))
	cfgPath := lockedConfig(t, dir, b.String())
	cfg, diags := config.Load(&config.LoadOptions{Files: []string{cfgPath}, LookupEnv: func(k string) (string, bool) {
		if k == "HOME" {
			return dir, true
		}
		return "", false
	}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return cfg, cfgPath
}

func mcphost(t testing.TB, home string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(binDir, "mcphost"), args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "MCPHOST_MANAGED_CONFIG="+filepath.Join(home, "managed.hcl"), "XDG_CACHE_HOME="+home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// wsStatus returns the transport-ws plugin's status.
func wsStatus(t *testing.T, h *host.Host) plugins.Status {
	t.Helper()
	for _, st := range h.Plugins().Status() {
		if st.Name == "transport-ws" {
			return st
		}
	}
	t.Fatal("no transport-ws plugin")
	return plugins.Status{}
}

// mustPID guards signals: kill(0) would signal the test's own process group.
func mustPID(t *testing.T, pid int) int {
	t.Helper()
	if pid <= 0 {
		t.Fatalf("no plugin process id (%d)", pid)
	}
	return pid
}

// pluginProcesses counts the running copies of a plugin started by hosts.
func pluginProcesses(t *testing.T, name string) []int {
	t.Helper()
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		exe, err := os.Readlink("/proc/" + e.Name() + "/exe")
		if err != nil {
			continue
		}
		// A private copy runs from a host's run directory, or from the
		// plugin cache (this test run's own: testbin.Run).
		if strings.HasPrefix(filepath.Base(exe), name+"-") && (strings.Contains(exe, "mcphost-plugins-") || filepath.Dir(exe) == testbin.PluginCache()) {
			var pid int
			fmt.Sscan(e.Name(), &pid)
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestCLIOverWebSocketPlugin(t *testing.T) {
	_, cfgPath := setup(t, 1)
	home := filepath.Dir(cfgPath)
	out, err := mcphost(t, home, "--config", cfgPath, "servers")
	if err != nil || !strings.Contains(out, "ws0    cli    "+cfgPath+"  ws         connected  8") {
		t.Errorf("servers: %v\n%s", err, out)
	}
	out, err = mcphost(t, home, "--config", cfgPath, "tools", "--server", "ws0")
	if err != nil || !strings.Contains(out, "mcp__ws0__echo ") || !strings.Contains(out, "mcp__ws0__add ") {
		t.Errorf("tools: %v\n%s", err, out)
	}
	out, err = mcphost(t, home, "--config", cfgPath, "call", "mcp__ws0__echo", `{"message":"through the plugin"}`)
	if err != nil || strings.TrimSpace(out) != "through the plugin" {
		t.Errorf("call: %v\n%s", err, out)
	}
	out, err = mcphost(t, home, "--config", cfgPath, "plugins", "verify")
	if err != nil || !strings.Contains(out, "transport-ws: OK ") {
		t.Errorf("verify: %v\n%s", err, out)
	}
}

func TestOneProcessServesTenServers(t *testing.T) {
	cfg, _ := setup(t, 10)
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h.ConnectAll(ctx, nil)
	for _, st := range h.Servers(ctx) {
		if st.State != conn.StateConnected {
			t.Errorf("%s: %s %s", st.Name, st.State, st.Error)
		}
	}
	for i := 0; i < 10; i++ {
		if _, err := h.CallTool(ctx, fmt.Sprintf("mcp__ws%d__echo", i), map[string]any{"message": "x"}, nil); err != nil {
			t.Error(err)
		}
	}
	st := wsStatus(t, h)
	if st.Starts != 1 || !st.Running {
		t.Errorf("plugin status %+v, want started once and running", st)
	}
	if n := len(pluginProcesses(t, "transport-ws")); n != 1 {
		t.Errorf("%d transport-ws processes for 10 servers, want 1", n)
	}
	// The plugin carries messages on a data socket in the host's directory.
	if socks, _ := filepath.Glob(filepath.Join(os.TempDir(), "mcphost-plugins-*", "plugin-dir*", "data-*")); len(socks) == 0 {
		t.Error("no data socket: messages went over the gRPC stream")
	}
	pid := mustPID(t, st.PID)
	h.Close()
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("plugin process %d outlived the host", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPluginCrashRecovery(t *testing.T) {
	cfg, _ := setup(t, 2)
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	echo := func(server string) error {
		_, err := h.CallTool(ctx, "mcp__"+server+"__echo", map[string]any{"message": "x"}, nil)
		return err
	}
	for _, s := range []string{"ws0", "ws1", "local"} {
		if err := echo(s); err != nil {
			t.Fatal(err)
		}
	}
	pid := mustPID(t, wsStatus(t, h).PID)
	syscall.Kill(pid, syscall.SIGKILL)
	// The stdio server is untouched throughout.
	if err := echo("local"); err != nil {
		t.Errorf("stdio server affected by the plugin crash: %v", err)
	}
	// The next calls to ws servers succeed after the plugin is restarted.
	var lastErr error
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if lastErr = echo("ws0"); lastErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if lastErr != nil {
		t.Fatalf("ws0 never recovered: %v", lastErr)
	}
	if err := echo("ws1"); err != nil {
		t.Errorf("ws1 after restart: %v", err)
	}
	st := wsStatus(t, h)
	if st.Starts != 2 || st.PID == pid {
		t.Errorf("plugin status after crash: %+v", st)
	}

	// It dies again soon after its restart: now it is restarted only after a
	// backoff (a crash loop must not spin).
	syscall.Kill(mustPID(t, st.PID), syscall.SIGKILL)
	deadline = time.Now().Add(5 * time.Second)
	sawBackoff := false
	for time.Now().Before(deadline) {
		err := echo("ws0")
		if err == nil {
			break
		}
		sawBackoff = sawBackoff || strings.Contains(err.Error(), "restarting in")
		time.Sleep(100 * time.Millisecond)
	}
	if !sawBackoff {
		t.Error("a second early death was restarted without a backoff")
	}
	if err := echo("ws0"); err != nil {
		t.Errorf("no recovery after the backoff: %v", err)
	}
}

// fakePlugin writes a shell script that records that it ran, then prints line.
func fakePlugin(t *testing.T, dir, line string) (path, marker string) {
	t.Helper()
	marker = filepath.Join(t.TempDir(), "ran")
	path = filepath.Join(dir, "fake")
	script := fmt.Sprintf("#!/bin/sh\ntouch %s\necho '%s'\nsleep 5\n", marker, line)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, marker
}

func start(t *testing.T, p *config.Plugin) error {
	t.Helper()
	rt, err := plugins.New(&config.Config{Plugins: []*config.Plugin{p}}, &plugins.Options{StartTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	_, err = rt.Info(context.Background(), p.Name)
	return err
}

func TestChangedBinaryIsRefusedBeforeItRuns(t *testing.T) {
	dir := t.TempDir()
	path, marker := fakePlugin(t, dir, "1|1|unix|/nowhere|grpc")
	sum, _ := plugins.FileSHA256(path)
	// Pinned, then changed.
	os.WriteFile(path, append([]byte("#!/bin/sh\ntouch "+marker+"\n"), []byte("# changed\n")...), 0o755)
	err := start(t, &config.Plugin{Name: "fake", Path: path, SHA256: sum})
	if err == nil || !strings.Contains(err.Error(), "does not match its pinned sha256") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the changed binary ran")
	}
	if err := start(t, &config.Plugin{Name: "fake", Path: path}); err == nil || !strings.Contains(err.Error(), "not pinned") {
		t.Errorf("unpinned: %v", err)
	}
}

func TestUnsafeLocationsAreRefused(t *testing.T) {
	real := t.TempDir()
	path, marker := fakePlugin(t, real, "x")
	sum, _ := plugins.FileSHA256(path)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := start(t, &config.Plugin{Name: "fake", Path: filepath.Join(link, "fake"), SHA256: sum}); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("symlinked directory: %v", err)
	}
	os.Chmod(real, 0o757)
	if err := start(t, &config.Plugin{Name: "fake", Path: path, SHA256: sum}); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("world-writable directory: %v", err)
	}
	os.Chmod(real, 0o755)
	os.Chmod(path, 0o777)
	if err := start(t, &config.Plugin{Name: "fake", Path: path, SHA256: sum}); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("world-writable binary: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a plugin in an unsafe location ran")
	}
}

func TestHandshakeAddressMustBeLocal(t *testing.T) {
	dir := t.TempDir()
	// A plugin announcing a TCP address off the machine is refused before
	// anything dials it.
	path, _ := fakePlugin(t, dir, "1|1|tcp|10.0.0.1:1|grpc")
	sum, _ := plugins.FileSHA256(path)
	err := start(t, &config.Plugin{Name: "fake", Path: path, SHA256: sum})
	if err == nil || !strings.Contains(err.Error(), "not on loopback") {
		t.Errorf("err = %v", err)
	}
}

// TestHeadersHelperReachesEveryRemoteTransport: a helper's headers reach real
// HTTP, SSE and WebSocket MCP servers, overriding static ones.
func TestHeadersHelperReachesEveryRemoteTransport(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	seen := map[string]http.Header{}
	record := func(kind string, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if _, ok := seen[kind]; !ok {
				seen[kind] = r.Header.Clone()
			}
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	srv := demoserver.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mux := http.NewServeMux()
	mux.Handle("/http", record("http", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	mux.Handle("/sse", record("sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	mux.Handle("/ws", record("ws", wsmcp.Handler(ctx, srv)))
	hs := httptest.NewServer(mux)
	defer hs.Close()
	wsURL := "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"

	helper := filepath.Join(dir, "helper.sh")
	os.WriteFile(helper, []byte("#!/bin/sh\nprintf '{\"Authorization\":\"Bearer dyn-%s\",\"X-From\":\"helper\"}' \"$MCP_SERVER_NAME\"\n"), 0o755)
	cfgPath := lockedConfig(t, dir, fmt.Sprintf(`server "h" {
  transport      = "http"
  url            = "%s/http"
  headers        = { Authorization = "Bearer static", X-Static = "kept" }
  headers_helper = [%q]
}
server "s" {
  transport      = "sse"
  url            = "%s/sse"
  headers_helper = %q
}
server "w" {
  transport      = "ws"
  url            = %q
  headers        = { X-Static = "kept" }
  headers_helper = [%q]
}
`, hs.URL, helper, hs.URL, helper, wsURL, helper))
	out, err := mcphost(t, dir, "--config", cfgPath, "servers")
	if err != nil {
		t.Fatalf("servers: %v\n%s", err, out)
	}
	for _, name := range []string{"h", "s", "w"} {
		if !regexp.MustCompile(`(?m)^` + name + ` .* connected `).MatchString(out) {
			t.Errorf("server %s not connected:\n%s", name, out)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for kind, server := range map[string]string{"http": "h", "sse": "s", "ws": "w"} {
		h := seen[kind]
		if h == nil {
			t.Errorf("%s: no request seen", kind)
			continue
		}
		if got := h.Get("Authorization"); got != "Bearer dyn-"+server {
			t.Errorf("%s: Authorization = %q, want the helper's (it overrides the static one)", kind, got)
		}
		if got := h.Get("X-From"); got != "helper" {
			t.Errorf("%s: X-From = %q", kind, got)
		}
	}
	if got := seen["http"].Get("X-Static"); got != "kept" {
		t.Errorf("http: static header lost: %q", got)
	}
}

func TestHeadersHelperFailureIsReported(t *testing.T) {
	dir := t.TempDir()
	helper := filepath.Join(dir, "helper.sh")
	os.WriteFile(helper, []byte("#!/bin/sh\necho 'vault sealed' >&2\nexit 2\n"), 0o755)
	cfgPath := lockedConfig(t, dir, fmt.Sprintf(`server "h" {
  transport      = "http"
  url            = "http://127.0.0.1:1/mcp"
  headers_helper = [%q]
}
server "local" {
  command = %q
}
`, helper, filepath.Join(binDir, "mcphost-demo")))
	out, _ := mcphost(t, dir, "--config", cfgPath, "servers", "--json")
	for _, want := range []string{`headers for server h: command: Headers helper failed`, `exit status 2; stderr: vault sealed`, `"state": "connected"`} {
		if !strings.Contains(out, want) {
			t.Errorf("servers --json lacks %q:\n%s", want, out)
		}
	}
}

// TestPluginsImportOnlyTheSDK: a plugin is built like a third party's would be.
func TestPluginsImportOnlyTheSDK(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./plugins/...")
	cmd.Dir = testbin.Root()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/mcphost/mcphost/") && !strings.HasPrefix(dep, "github.com/mcphost/mcphost/sdk") &&
			!strings.HasPrefix(dep, "github.com/mcphost/mcphost/plugins/") {
			t.Errorf("plugins depend on %s", dep)
		}
	}
}

// TestPluginLogsAreAttributedAndScrubbed: a plugin's stderr is untrusted. Its
// lines (even ones forging a level) are logged under the plugin's name, and
// secrets in them are masked.
func TestPluginLogsAreAttributedAndScrubbed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "noisy")
	script := `#!/bin/sh
echo '{"@level":"error","@message":"refreshing with Authorization: Bearer tok-SECRET-1","@module":"noisy","refresh_token":"rt-SECRET-2"}' >&2
echo 'plain line with client_secret=cs-SECRET-3' >&2
sleep 0.2
echo '1|1|tcp|10.0.0.1:1|grpc'
sleep 5
`
	os.WriteFile(path, []byte(script), 0o755)
	sum, _ := plugins.FileSHA256(path)
	var buf syncbuf.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Trace})
	rt, err := plugins.New(&config.Config{Plugins: []*config.Plugin{{Name: "noisy", Path: path, SHA256: sum}}}, &plugins.Options{Logger: log, StartTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.Info(context.Background(), "noisy"); err == nil {
		t.Fatal("a plugin announcing an off-machine address started")
	}
	out := buf.String()
	for _, secret := range []string{"tok-SECRET-1", "rt-SECRET-2", "cs-SECRET-3"} {
		if strings.Contains(out, secret) {
			t.Errorf("host log contains %s:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "plugin.noisy") || !strings.Contains(out, "[REDACTED]") {
		t.Errorf("plugin lines not attributed or not masked:\n%s", out)
	}
}

// pki is a throwaway CA with a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files.
type pki struct {
	dir                           string
	caPool                        *x509.CertPool
	serverCert                    tls.Certificate
	caFile, clientCert, clientKey string
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, server bool) ([]byte, []byte) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "leaf"}, NotBefore: time.Now().Add(-time.Hour),
			NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
		if server {
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		} else {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, _ := x509.MarshalECPrivateKey(key)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	}
	p := &pki{dir: dir, caPool: x509.NewCertPool()}
	p.caPool.AddCert(ca)
	sc, sk := issue(2, true)
	p.serverCert, _ = tls.X509KeyPair(sc, sk)
	cc, ck := issue(3, false)
	p.caFile, p.clientCert, p.clientKey = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	os.WriteFile(p.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600)
	os.WriteFile(p.clientCert, cc, 0o600)
	os.WriteFile(p.clientKey, ck, 0o600)
	return p
}

// TestWSSWithMutualTLS: wss:// with a private CA, and a server that demands
// a client certificate.
func TestWSSWithMutualTLS(t *testing.T) {
	p := newPKI(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hs := httptest.NewUnstartedServer(wsmcp.Handler(ctx, demoserver.New(nil)))
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{p.serverCert}, ClientCAs: p.caPool, ClientAuth: tls.RequireAndVerifyClientCert}
	hs.StartTLS()
	defer hs.Close()
	url := "wss" + strings.TrimPrefix(hs.URL, "https") + "/mcp"
	dir := t.TempDir()
	cfgPath := lockedConfig(t, dir, fmt.Sprintf(`server "mtls" {
  transport        = "ws"
  url              = %q
  ca_file          = %q
  client_cert_file = %q
  client_key_file  = %q
}
server "nocert" {
  transport = "ws"
  url       = "%s?n=2"
  ca_file   = %q
}
server "untrusted" {
  transport = "ws"
  url       = "%s?n=3"
}
`, url, p.caFile, p.clientCert, p.clientKey, url, p.caFile, url))
	out, err := mcphost(t, dir, "--config", cfgPath, "call", "mcp__mtls__echo", `{"message":"over mTLS"}`)
	if err != nil || strings.TrimSpace(out) != "over mTLS" {
		t.Errorf("call over mTLS: %v\n%s", err, out)
	}
	out, _ = mcphost(t, dir, "--config", cfgPath, "servers")
	if !regexp.MustCompile(`(?m)^nocert .* failed .*`).MatchString(out) || !regexp.MustCompile(`(?m)^untrusted .* failed .*certificate`).MatchString(out) {
		t.Errorf("servers without a client certificate or the CA must fail:\n%s", out)
	}
}

// TestPluginCrashFailsInFlightCalls: a call in flight when the plugin dies
// fails promptly with an error that says what happened.
func TestPluginCrashFailsInFlightCalls(t *testing.T) {
	h := wsHost(t)
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		_, err := h.CallTool(ctx, "mcp__ws0__slow", map[string]any{"milliseconds": 20000}, nil)
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond)
	syscall.Kill(mustPID(t, wsStatus(t, h).PID), syscall.SIGKILL)
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("the call succeeded although its plugin died")
		}
		t.Logf("in-flight call failed with: %v", err)
		if !strings.Contains(err.Error(), "plugin transport-ws did not respond; see its log") {
			t.Errorf("unclear error: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the call did not fail within 2 s of the plugin's death")
	}
}

// connectProxy is a minimal HTTP CONNECT proxy on 127.0.0.1 that counts tunnels.
func connectProxy(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var tunnels atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		upstream, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		tunnels.Add(1)
		client, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			upstream.Close()
			return
		}
		io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n")
		go func() { io.Copy(upstream, client); upstream.Close() }()
		go func() { io.Copy(client, upstream); client.Close() }()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &tunnels
}

// TestWSPluginOptions: a proxy is used when configured, and a 401 from the
// server puts it in needs-auth (the plugin's auth error code reaches the host),
// with the advice to configure authorization, since it has no oauth or auth block.
func TestWSPluginOptions(t *testing.T) {
	wsURL := wsServer(t)
	proxyURL, tunnels := connectProxy(t)
	locked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer locked.Close()
	dir := t.TempDir()
	cfgPath := lockedConfig(t, dir, fmt.Sprintf(`server "proxied" {
  transport = "ws"
  url       = %q
  proxy_url = %q
}
server "locked" {
  transport = "ws"
  url       = "ws%s/mcp"
}
`, wsURL, proxyURL, strings.TrimPrefix(locked.URL, "http")))
	out, _ := mcphost(t, dir, "--config", cfgPath, "servers")
	if !regexp.MustCompile(`(?m)^proxied .* connected `).MatchString(out) {
		t.Errorf("proxied server:\n%s", out)
	}
	if tunnels.Load() == 0 {
		t.Error("the proxy was not used")
	}
	if !regexp.MustCompile(`(?m)^locked .* needs-auth .*requires authorization, and its server block has no .oauth \{\}. or .auth "SCHEME" \{\}. block`).MatchString(out) {
		t.Errorf("a 401 through the plugin must mean needs-auth:\n%s", out)
	}
}

// TestUnknownProtocolVersionIsRefused: a plugin that only speaks another
// protocol version is refused with a message saying so.
func TestUnknownProtocolVersionIsRefused(t *testing.T) {
	dir := t.TempDir()
	path, _ := fakePlugin(t, dir, "1|99|unix|/nowhere|grpc")
	sum, _ := plugins.FileSHA256(path)
	err := start(t, &config.Plugin{Name: "fake", Path: path, SHA256: sum})
	if err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("err = %v", err)
	}
}

// requireBearer refuses requests without the token, as an OAuth-protected
// MCP server would.
func requireBearer(token string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// TestAuthPluginOnEveryRemoteTransport: an auth "SCHEME" block routes the
// server's credentials through the plugin that provides the scheme, for
// http (the go-sdk's OAuthHandler, including Authorize after a 401), sse and
// ws; the block is checked against the plugin's schema at load time.
func TestAuthPluginOnEveryRemoteTransport(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := demoserver.New(nil)
	mux := http.NewServeMux()
	mux.Handle("/http", requireBearer("s3cret", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	mux.Handle("/sse", requireBearer("s3cret", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	mux.Handle("/ws", requireBearer("s3cret", wsmcp.Handler(ctx, srv)))
	hs := httptest.NewServer(mux)
	defer hs.Close()
	dir := t.TempDir()
	cfgPath := lockedConfig(t, dir, fmt.Sprintf(`server "h" {
  transport = "http"
  url       = "%[1]s/http"
  auth "static" {
    token = "s3cret"
  }
}
server "h2" {
  transport = "http"
  url       = "%[1]s/http?second"
  auth "static" {
    token             = "s3cret"
    require_authorize = true
  }
}
server "s" {
  transport = "sse"
  url       = "%[1]s/sse"
  auth "static" {
    token = "s3cret"
  }
}
server "w" {
  transport = "ws"
  url       = "ws%[2]s/ws"
  auth "static" {
    token             = "s3cret"
    require_authorize = true
  }
}
server "wrong" {
  transport = "http"
  url       = "%[1]s/http?wrong"
  auth "static" {
    token = "nope"
  }
}
`, hs.URL, strings.TrimPrefix(hs.URL, "http")))
	out, _ := mcphost(t, dir, "--config", cfgPath, "servers")
	for _, name := range []string{"h", "h2", "s", "w"} {
		if !regexp.MustCompile(`(?m)^` + name + ` .* connected `).MatchString(out) {
			t.Errorf("%s not connected:\n%s", name, out)
		}
	}
	if !regexp.MustCompile(`(?m)^wrong .* (needs-auth|failed) `).MatchString(out) {
		t.Errorf("a wrong token must not connect:\n%s", out)
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, "nope") {
		t.Errorf("a token appears in the output:\n%s", out)
	}
	out, err := mcphost(t, dir, "--config", cfgPath, "call", "mcp__h2__echo", `{"message":"with a plugin token"}`)
	if err != nil || strings.TrimSpace(out) != "with a plugin token" {
		t.Errorf("call: %v\n%s", err, out)
	}

	// The block is checked against the scheme's schema, and the scheme must exist.
	bad := lockedConfig(t, t.TempDir(), fmt.Sprintf(`server "b" {
  transport = "http"
  url       = "%[1]s/http"
  auth "static" {
    tokn = "x"
  }
}
server "c" {
  transport = "http"
  url       = "%[1]s/http?c"
  auth "oidc" {
  }
}
`, hs.URL))
	out, err = mcphost(t, dir, "--config", bad, "config", "validate")
	for _, want := range []string{
		`The static auth scheme (plugin auth-static) does not take "tokn". Allowed: token, require_authorize. Did you mean "token"?`,
		`The static auth scheme (plugin auth-static) requires option "token".`,
		`No plugin provides the auth scheme "oidc". Available schemes: static, xaa.`,
	} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("validate lacks %q:\n%s", want, out)
		}
	}
}

// wsHost returns a host with one ws server (setup), whose plugin has
// answered a call.
func wsHost(t *testing.T) *host.Host {
	t.Helper()
	cfg, _ := setup(t, 1)
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if _, err := h.CallTool(context.Background(), "mcp__ws0__echo", map[string]any{"message": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestRelayOverWebSocketPlugin: the gateway's relay sends a tools/call on a
// plugin transport's raw lane — for clients of both eras — and gets the
// server's response back undecoded; a relayed call in flight when the
// plugin dies fails at once, and the next one goes to the restarted plugin.
func TestRelayOverWebSocketPlugin(t *testing.T) {
	h := wsHost(t)
	ctx := context.Background()
	for _, v := range []string{conn.NewProtocol, "2025-11-25"} {
		resp, handled, err := h.Serving().RelayCall(ctx, "mcp__ws0__echo", json.RawMessage(`{"message":"raw `+v+`"}`), host.RelayOptions{ProtocolVersion: v})
		if err != nil || !handled || !strings.Contains(string(resp), `"text":"raw `+v+`"`) || !strings.Contains(string(resp), `"id":"mcphost-raw-`) {
			t.Fatalf("relayed echo for a %s client: %s %v %v", v, resp, handled, err)
		}
		if hasResultType := strings.Contains(string(resp), `"resultType"`); hasResultType != (v >= conn.NewProtocol) {
			t.Errorf("a %s client's result has resultType: %v (%s)", v, hasResultType, resp)
		}
	}
	type end struct {
		handled bool
		err     error
	}
	ends := make(chan end, 1)
	go func() {
		_, handled, err := h.Serving().RelayCall(ctx, "mcp__ws0__slow", json.RawMessage(`{"milliseconds":20000}`), host.RelayOptions{ProtocolVersion: conn.NewProtocol})
		ends <- end{handled, err}
	}()
	time.Sleep(300 * time.Millisecond)
	syscall.Kill(mustPID(t, wsStatus(t, h).PID), syscall.SIGKILL)
	select {
	case e := <-ends:
		if !e.handled || e.err == nil {
			t.Fatalf("the relayed call in flight when its plugin died: handled %v, %v", e.handled, e.err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the relayed call did not fail within 2 s of the plugin's death")
	}
	// (Calls fail until the plugin's death is noticed and it is restarted.)
	var lastErr error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, lastErr = h.CallTool(ctx, "mcp__ws0__echo", map[string]any{"message": "after"}, nil); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("ws0 never recovered: %v", lastErr)
	}
	resp, handled, err := h.Serving().RelayCall(ctx, "mcp__ws0__echo", json.RawMessage(`{"message":"raw again"}`), host.RelayOptions{ProtocolVersion: conn.NewProtocol})
	if err != nil || !handled || !strings.Contains(string(resp), `"text":"raw again"`) {
		t.Fatalf("relayed echo after the restart: %s %v %v", resp, handled, err)
	}
}
