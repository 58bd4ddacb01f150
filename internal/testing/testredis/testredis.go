// Package testredis runs a real Redis server for tests: Debian's
// redis-server package, started on 127.0.0.1 with a free port in a
// temporary directory, without persistence (--save "" --appendonly no), and
// optionally with a password, an ACL user confined to a key prefix, and TLS
// (a CA and certificates generated for the test, mutual TLS on request).
//
// Stop and Restart let a test take the server away and bring it back on
// the same port, for outage tests.
//
// The binary must be installed (InstallCommand); a test that needs it and
// does not find it fails, naming the command, rather than skipping.
package testredis

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// InstallCommand installs the Redis server that Start runs (as root, after
// apt-get update). Debian's package does not start a service where
// invoke-rc.d's policy forbids it, as in containers; Start never uses one.
const InstallCommand = "apt-get install -y --no-install-recommends redis-server"

// readyTimeout bounds the wait for a started server to answer PING.
const readyTimeout = 15 * time.Second

// Options configures the server. The zero Options run a server that needs
// no password, over plain TCP.
type Options struct {
	// Password is required of the default user (requirepass). OPTIONAL.
	Password string
	// ACLUser and ACLPassword add an ACL user with every command, confined
	// to the keys and channels starting with ACLKeyPrefix (all of them when
	// ACLKeyPrefix is ""). OPTIONAL; ACLPassword is REQUIRED with ACLUser.
	ACLUser, ACLPassword string
	// ACLKeyPrefix confines ACLUser's keys (~prefix*) and Pub/Sub channels
	// (&prefix*). OPTIONAL.
	ACLKeyPrefix string
	// DefaultUserOff disables the default user (--user default off), so
	// that only ACLUser can log in. OPTIONAL.
	DefaultUserOff bool
	// TLS serves TLS only (--port 0 --tls-port P) with a server certificate
	// for 127.0.0.1, ::1 and localhost signed by a CA made for the test
	// (CAFile, TLSConfig). OPTIONAL.
	TLS bool
	// ClientCerts requires clients to present a certificate signed by the
	// test CA (--tls-auth-clients yes); ClientCertFile and ClientKeyFile
	// hold one. OPTIONAL; needs TLS.
	ClientCerts bool
}

// Server is a running redis-server. It is stopped, and its process reaped,
// when the test that started it ends. Its methods may be called
// concurrently.
type Server struct {
	opts  Options
	bin   string
	dir   string
	port  int
	certs *certs // nil without TLS

	mu   sync.Mutex
	proc *process // nil while stopped
	log  syncbuf.Buffer
}

// process is one run of redis-server.
type process struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	waitErr error         // the process's exit, once done is closed
}

// Start starts redis-server with o and waits until it answers PING. It
// fails the test if the binary is missing or the server does not start.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		bin = "/usr/bin/redis-server"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("testredis: the Redis server is not installed (%v); install it with: %s", err, InstallCommand)
	}
	if o.ACLUser != "" && o.ACLPassword == "" {
		t.Fatal("testredis: ACLUser without ACLPassword")
	}
	if o.ClientCerts && !o.TLS {
		t.Fatal("testredis: ClientCerts without TLS")
	}
	s := &Server{opts: o, bin: bin, dir: t.TempDir()}
	if o.TLS {
		c, err := writeCerts(s.dir)
		if err != nil {
			t.Fatalf("testredis: %v", err)
		}
		s.certs = c
	}
	t.Cleanup(s.Stop)
	// The free port may be taken between choosing and binding it: retry.
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("testredis: %v", err)
		}
		s.port = port
		err = s.start()
		if err == nil {
			return s
		}
		s.Stop()
		if attempt == 3 {
			t.Fatalf("testredis: %v\nredis-server's log:\n%s", err, s.Log())
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// args returns redis-server's arguments.
func (s *Server) args() []string {
	o := s.opts
	a := []string{
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--logfile", "",
		"--loglevel", "notice",
	}
	port := strconv.Itoa(s.port)
	if o.TLS {
		a = append(a, "--port", "0", "--tls-port", port,
			"--tls-cert-file", s.certs.serverCert,
			"--tls-key-file", s.certs.serverKey,
			"--tls-ca-cert-file", s.certs.caFile)
		if o.ClientCerts {
			a = append(a, "--tls-auth-clients", "yes")
		} else {
			a = append(a, "--tls-auth-clients", "no")
		}
	} else {
		a = append(a, "--port", port)
	}
	if o.Password != "" {
		a = append(a, "--requirepass", o.Password)
	}
	if o.ACLUser != "" {
		keys, channels := "~*", "&*"
		if o.ACLKeyPrefix != "" {
			keys, channels = "~"+o.ACLKeyPrefix+"*", "&"+o.ACLKeyPrefix+"*"
		}
		// Each word its own argument: redis-server quotes every argument
		// into one token of the configuration line.
		a = append(a, "--user", o.ACLUser, "on", ">"+o.ACLPassword, keys, channels, "+@all")
	}
	if o.DefaultUserOff {
		a = append(a, "--user", "default", "off")
	}
	return a
}

// start launches redis-server on s.port and waits until it answers PING.
func (s *Server) start() error {
	p := &process{cmd: exec.Command(s.bin, s.args()...), done: make(chan struct{})}
	p.cmd.Dir = s.dir
	p.cmd.Stdout, p.cmd.Stderr = &s.log, &s.log
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %v", s.bin, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()

	deadline := time.Now().Add(readyTimeout)
	for {
		err := s.ping()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("redis-server exited before it was ready: %v", p.waitErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server not ready after %v: %v", readyTimeout, err)
		}
	}
}

// ping sends PING (after AUTH if credentials are needed) and expects PONG.
func (s *Server) ping() error {
	c, err := s.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	r := bufio.NewReader(c)
	switch user, pass := s.credentials(); {
	case user != "":
		if err := command(c, r, "AUTH", user, pass); err != nil {
			return err
		}
	case pass != "":
		if err := command(c, r, "AUTH", pass); err != nil {
			return err
		}
	}
	return command(c, r, "PING")
}

// dial connects to the server as a client would (with the client
// certificate if one is required).
func (s *Server) dial() (net.Conn, error) {
	d := &net.Dialer{Timeout: 2 * time.Second}
	if s.certs == nil {
		return d.Dial("tcp", s.Addr())
	}
	return tls.DialWithDialer(d, "tcp", s.Addr(), s.ClientTLSConfig())
}

// command sends one command and reads a simple reply, failing on an error
// reply.
func command(w io.Writer, r *bufio.Reader, args ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if strings.HasPrefix(line, "-") {
		return errors.New(strings.TrimSpace(line[1:]))
	}
	return nil
}

// credentials returns the user and password a client logs in with: the ACL
// user's if there is one, else the default user's password.
func (s *Server) credentials() (user, pass string) {
	if s.opts.ACLUser != "" {
		return s.opts.ACLUser, s.opts.ACLPassword
	}
	return "", s.opts.Password
}

// Addr returns the server's address, "127.0.0.1:port".
func (s *Server) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// URL returns the URL a client connects with: redis:// or, with TLS,
// rediss://, with the ACL user's credentials or the default user's
// password.
func (s *Server) URL() string {
	u := &url.URL{Scheme: "redis", Host: s.Addr()}
	if s.opts.TLS {
		u.Scheme = "rediss"
	}
	switch user, pass := s.credentials(); {
	case user != "":
		u.User = url.UserPassword(user, pass)
	case pass != "":
		u.User = url.UserPassword("", pass)
	}
	return u.String()
}

// CAFile returns the path of the PEM file of the CA that signed the
// server's certificate ("" without TLS).
func (s *Server) CAFile() string {
	if s.certs == nil {
		return ""
	}
	return s.certs.caFile
}

// CertPool returns a pool holding the test CA (nil without TLS).
func (s *Server) CertPool() *x509.CertPool {
	if s.certs == nil {
		return nil
	}
	return s.certs.pool
}

// ClientCertFile and ClientKeyFile return the paths of a client
// certificate signed by the test CA and of its key, in PEM ("" without
// TLS). The server requires them with Options.ClientCerts.
func (s *Server) ClientCertFile() string {
	if s.certs == nil {
		return ""
	}
	return s.certs.clientCert
}

// ClientKeyFile: see ClientCertFile.
func (s *Server) ClientKeyFile() string {
	if s.certs == nil {
		return ""
	}
	return s.certs.clientKey
}

// ClientTLSConfig returns a TLS configuration that trusts the test CA and
// presents the client certificate (nil without TLS).
func (s *Server) ClientTLSConfig() *tls.Config {
	if s.certs == nil {
		return nil
	}
	return &tls.Config{
		RootCAs:      s.certs.pool,
		Certificates: []tls.Certificate{s.certs.client},
		ServerName:   "127.0.0.1",
		MinVersion:   tls.VersionTLS12,
	}
}

// Stop kills the server (SIGKILL: no goodbye to its clients, as in a
// crash; the kernel closes its connections) and waits for its process to
// exit. It does nothing if the server is stopped.
func (s *Server) Stop() {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL) // a stopped (paused) process too
	<-p.done
}

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		_ = s.proc.cmd.Process.Signal(sig)
	}
}

// Restart stops the server if it runs and starts it again on the same port
// with the same options; what it held is gone. It fails the test if the
// server does not start.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	// The port is free again once the process has exited; a client
	// connection in TIME_WAIT does not stop Redis binding (SO_REUSEADDR).
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		if err = s.start(); err == nil {
			return
		}
		s.Stop()
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("testredis: restarting: %v\nredis-server's log:\n%s", err, s.Log())
}

// Log returns what redis-server has logged so far (every run's).
func (s *Server) Log() string { return s.log.String() }

// certs are the PEM files of a test CA, a server certificate and a client
// certificate.
type certs struct {
	caFile, serverCert, serverKey, clientCert, clientKey string
	pool                                                 *x509.CertPool
	client                                               tls.Certificate
}

func writeCerts(dir string) (*certs, error) {
	ca, err := newCA()
	if err != nil {
		return nil, err
	}
	server, err := ca.issue("redis server", true)
	if err != nil {
		return nil, err
	}
	client, err := ca.issue("redis client", false)
	if err != nil {
		return nil, err
	}
	c := &certs{
		caFile:     filepath.Join(dir, "ca.pem"),
		serverCert: filepath.Join(dir, "server.pem"),
		serverKey:  filepath.Join(dir, "server-key.pem"),
		clientCert: filepath.Join(dir, "client.pem"),
		clientKey:  filepath.Join(dir, "client-key.pem"),
		pool:       x509.NewCertPool(),
	}
	for path, b := range map[string][]byte{
		c.caFile: ca.certPEM, c.serverCert: server.certPEM, c.serverKey: server.keyPEM,
		c.clientCert: client.certPEM, c.clientKey: client.keyPEM,
	} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, err
		}
	}
	c.pool.AddCert(ca.cert)
	if c.client, err = tls.X509KeyPair(client.certPEM, client.keyPEM); err != nil {
		return nil, err
	}
	return c, nil
}
