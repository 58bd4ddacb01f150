// Package testprom runs a real Prometheus server for tests: Debian's
// prometheus package, started on 127.0.0.1 with a free port, a temporary
// storage directory and a generated configuration that scrapes the given
// targets every second. Tests then read what Prometheus scraped through its
// HTTP API (Query, Targets).
//
// The binary must be installed (InstallCommand); a test that needs it and
// does not find it fails, naming the command, rather than skipping.
package testprom

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// InstallCommand installs the Prometheus server that Start runs (as root,
// after apt-get update). Debian's package does not start a service where
// invoke-rc.d's policy forbids it, as in containers.
const InstallCommand = "apt-get install -y --no-install-recommends prometheus"

// ErrNoData is returned by Query when the query matches no sample (yet).
var ErrNoData = errors.New("testprom: no sample")

// Target is an endpoint for Prometheus to scrape.
type Target struct {
	// URL is the metrics endpoint, "http://127.0.0.1:port/metrics"
	// (REQUIRED).
	URL string
	// BearerToken is sent as "Authorization: Bearer …" (OPTIONAL).
	BearerToken string
	// Job is the target's job label (OPTIONAL; "target0", "target1", …).
	Job string
}

// Server is a running Prometheus. It is stopped, and its process reaped,
// when the test that started it ends. Its methods may be called
// concurrently.
type Server struct {
	// URL is the server's base URL, "http://127.0.0.1:port".
	URL string

	cmd     *exec.Cmd
	log     syncbuf.Buffer
	done    chan struct{} // closed when the process has exited
	waitErr error         // the process's exit, once done is closed
	client  *http.Client
}

// Start starts Prometheus scraping targets and waits until it is ready.
// It fails the test if the binary is missing or Prometheus does not start.
func Start(t testing.TB, targets ...Target) *Server {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		bin = "/usr/bin/prometheus"
	}
	return start(t, bin, targets)
}

func start(t testing.TB, bin string, targets []Target) *Server {
	t.Helper()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("testprom: the Prometheus server is not installed (%v); install it with: %s", err, InstallCommand)
	}
	dir := t.TempDir()
	config, err := configFile(targets)
	if err != nil {
		t.Fatalf("testprom: %v", err)
	}
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, config, 0o600); err != nil {
		t.Fatalf("testprom: %v", err)
	}
	// The free port may be taken between choosing and binding it: retry.
	for attempt := 1; ; attempt++ {
		s, err := launch(bin, configPath, filepath.Join(dir, "data"))
		if err != nil {
			t.Fatalf("testprom: starting %s: %v", bin, err)
		}
		t.Cleanup(s.stop)
		err = s.waitReady(30 * time.Second)
		if err == nil {
			return s
		}
		s.stop()
		if attempt == 3 {
			t.Fatalf("testprom: %v\nPrometheus's log:\n%s", err, s.Log())
		}
	}
}

// launch starts Prometheus on a free loopback port; the returned Server
// owns the goroutine that reaps the process.
func launch(bin, configPath, dataDir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s := &Server{
		URL:    "http://" + addr,
		done:   make(chan struct{}),
		client: &http.Client{Timeout: 5 * time.Second},
	}
	s.cmd = exec.Command(bin,
		"--config.file="+configPath,
		"--storage.tsdb.path="+dataDir,
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady waits until /-/ready answers 200, the process exits, or
// timeout passes.
func (s *Server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := s.client.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("prometheus exited before it was ready: %v", s.waitErr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("prometheus not ready after %v", timeout)
		}
	}
}

// stop ends the process (SIGTERM, then SIGKILL after 10 s) and waits for it.
func (s *Server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Log returns what Prometheus has logged so far.
func (s *Server) Log() string { return s.log.String() }

// configFile renders prometheus.yml. JSON is YAML, and encoding/json
// quotes every value correctly.
func configFile(targets []Target) ([]byte, error) {
	type authorization struct {
		Type        string `json:"type"`
		Credentials string `json:"credentials"`
	}
	type staticConfig struct {
		Targets []string `json:"targets"`
	}
	type scrapeConfig struct {
		JobName       string         `json:"job_name"`
		Scheme        string         `json:"scheme"`
		MetricsPath   string         `json:"metrics_path"`
		StaticConfigs []staticConfig `json:"static_configs"`
		Authorization *authorization `json:"authorization,omitempty"`
	}
	cfg := struct {
		Global        map[string]string `json:"global"`
		ScrapeConfigs []scrapeConfig    `json:"scrape_configs"`
	}{
		Global:        map[string]string{"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
		ScrapeConfigs: []scrapeConfig{},
	}
	for i, tg := range targets {
		u, err := url.Parse(tg.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			return nil, fmt.Errorf("target %d: URL %q is not http(s)://host:port/path", i, tg.URL)
		}
		sc := scrapeConfig{
			JobName:       tg.Job,
			Scheme:        u.Scheme,
			MetricsPath:   u.Path,
			StaticConfigs: []staticConfig{{Targets: []string{u.Host}}},
		}
		if sc.JobName == "" {
			sc.JobName = "target" + strconv.Itoa(i)
		}
		if sc.MetricsPath == "" {
			sc.MetricsPath = "/"
		}
		if tg.BearerToken != "" {
			sc.Authorization = &authorization{Type: "Bearer", Credentials: tg.BearerToken}
		}
		cfg.ScrapeConfigs = append(cfg.ScrapeConfigs, sc)
	}
	return json.MarshalIndent(cfg, "", "  ")
}
