// Package testbin builds mcphost's binaries for tests that run them as real
// processes.
package testbin

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// Root returns the module's root directory: the nearest directory above
// this file that holds go.mod (so that moving the package does not move
// the root).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			panic("testbin: no go.mod above " + file)
		}
	}
}

// Build builds ./cmd/..., the benchmarks' reference proxy
// (./internal/testing/benchproxy) and the SEP-2624 interceptor server
// (./internal/testing/interceptorserver) into dir, and ./plugins/... with the
// test-only plugins of ./internal/testing/testplugins/... into dir/plugins.
func Build(dir string) error {
	for _, b := range []struct {
		out  string
		args []string
	}{
		{dir, []string{"./cmd/...", "./internal/testing/benchproxy", "./internal/testing/interceptorserver"}},
		// As `make build` builds them: plugins are hashed before every start,
		// so smaller binaries start faster.
		{filepath.Join(dir, "plugins"), []string{"-trimpath", "-ldflags=-s -w", "./plugins/...", "./internal/testing/testplugins/..."}},
	} {
		args := append([]string{"build", "-o", b.out + string(filepath.Separator)}, b.args...)
		cmd := exec.Command("go", args...)
		cmd.Dir = Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %v: %v\n%s", b.args, err, out)
		}
		// Whatever the umask: the host refuses plugins in a directory
		// writable by group or others.
		if err := os.Chmod(b.out, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Run builds the binaries into a fresh directory (mode 0755, as plugin
// checks require), gives the tests a cache directory of their own
// (XDG_CACHE_HOME), tells set where the binaries are, runs the tests and
// removes the directory. It returns the exit code for os.Exit:
//
//	func TestMain(m *testing.M) { os.Exit(testbin.Run(m, func(dir string) { binDir = dir })) }
func Run(m interface{ Run() int }, set func(dir string)) int {
	dir, err := os.MkdirTemp("", "mcphost-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The user's cache directory (where hosts keep verified plugin copies)
	// is this run's own: the tests neither share it with other runs nor
	// leave anything in the user's.
	cache := filepath.Join(dir, "cache")
	if err := os.Mkdir(cache, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	set(dir)
	return m.Run()
}

// PluginCache is where a host run by the tests keeps verified plugin copies
// (see Run), when the host's environment does not say otherwise.
func PluginCache() string { return filepath.Join(os.Getenv("XDG_CACHE_HOME"), "mcphost", "plugins") }

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. It
// is drawn at random below the systems' ephemeral ranges (Linux 32768–
// 60999, macOS and Windows 49152–65535): a port the kernel picked (":0")
// can be handed to an outgoing connection of another test before the
// process meant to listen on it binds it ("address already in use").
func FreePort(t testing.TB) int {
	t.Helper()
	const lo, hi = 10000, 32768
	for range 200 {
		port := lo + rand.IntN(hi-lo)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // taken: draw again
		}
		ln.Close()
		return port
	}
	t.Fatalf("no free port in %d–%d on 127.0.0.1 after 200 draws", lo, hi-1)
	return 0
}

// WaitListening waits up to 30 s for something to accept connections on
// 127.0.0.1:port.
func WaitListening(t testing.TB, port int) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s", addr)
}

// ServeCmd prepares `mcphost --config CFG --log-level level serve args…`
// from the binaries in binDir, on a configuration of the demo server (its
// demoArgs), every call allowed, and extra (HCL, first), written to a
// private directory that is also the command's home (HOME,
// MCPHOST_CONFIG_DIR, MCPHOST_MANAGED_CONFIG). Its stderr is collected in
// the returned buffer.
func ServeCmd(t testing.TB, binDir, extra, level string, demoArgs []string, args ...string) (*exec.Cmd, *syncbuf.Buffer) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcphost.hcl")
	quoted := make([]string, len(demoArgs))
	for i, a := range demoArgs {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	src := fmt.Sprintf("%spermissions {\n  default_mode = \"allow_all\"\n}\nserver \"demo\" {\n  command = %q\n  args = [%s]\n}\n",
		extra, filepath.Join(binDir, "mcphost-demo"), strings.Join(quoted, ", "))
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(binDir, "mcphost"), append([]string{"--config", cfg, "--log-level", level, "serve"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir, "MCPHOST_CONFIG_DIR="+filepath.Join(dir, "cfg"), "MCPHOST_MANAGED_CONFIG="+filepath.Join(dir, "managed.hcl"))
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	return cmd, stderr
}
