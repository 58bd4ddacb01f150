//go:build unix

package testredis

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// client returns a go-redis client for s's URL, trusting the test CA (and
// presenting the client certificate) with TLS.
func client(t *testing.T, s *Server, mutate func(*redis.Options)) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	if o.TLSConfig != nil {
		o.TLSConfig = s.ClientTLSConfig()
	}
	o.MaxRetries = -1
	o.DialerRetries = 1
	o.DialTimeout, o.ReadTimeout = 2*time.Second, 2*time.Second
	if mutate != nil {
		mutate(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPlainStopRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := Start(t, Options{})
	if !strings.HasPrefix(s.URL(), "redis://127.0.0.1:") || strings.Contains(s.URL(), "@") {
		t.Errorf("URL() = %q, want redis://127.0.0.1:port without credentials", s.URL())
	}
	c := client(t, s, nil)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET k = %q, %v; want v", got, err)
	}
	// No persistence: the configuration says so.
	if got, err := c.ConfigGet(ctx, "save").Result(); err != nil || got["save"] != "" {
		t.Errorf("CONFIG GET save = %v, %v; want empty", got, err)
	}
	if got, err := c.ConfigGet(ctx, "appendonly").Result(); err != nil || got["appendonly"] != "no" {
		t.Errorf("CONFIG GET appendonly = %v, %v; want no", got, err)
	}

	s.Stop()
	if _, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		t.Fatal("the server still accepts connections after Stop")
	}
	s.Stop() // harmless

	s.Restart(t)
	c2 := client(t, s, nil)
	if err := c2.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("GET k after Restart: %v, want redis.Nil (nothing persisted)", err)
	}
}

func TestPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := Start(t, Options{Password: "s3cret p@ss"})
	if err := client(t, s, nil).Ping(ctx).Err(); err != nil {
		t.Fatalf("PING with the URL's password: %v", err)
	}
	err := client(t, s, func(o *redis.Options) { o.Password = "" }).Ping(ctx).Err()
	if err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("PING without a password: %v, want NOAUTH", err)
	}
}

func TestACLUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := Start(t, Options{ACLUser: "app", ACLPassword: "app-pass", ACLKeyPrefix: "app1:", DefaultUserOff: true})
	if !strings.HasPrefix(s.URL(), "redis://app:app-pass@") {
		t.Errorf("URL() = %q, want the ACL user's credentials", s.URL())
	}
	c := client(t, s, nil)
	if err := c.Set(ctx, "app1:k", "v", 0).Err(); err != nil {
		t.Fatalf("SET within the prefix: %v", err)
	}
	if err := c.Set(ctx, "other:k", "v", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("SET outside the prefix: %v, want NOPERM", err)
	}
	if err := c.Publish(ctx, "other", "m").Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("PUBLISH outside the prefix: %v, want NOPERM", err)
	}
	err := client(t, s, func(o *redis.Options) { o.Username, o.Password = "", "" }).Ping(ctx).Err()
	if err == nil {
		t.Error("the default user is not off")
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := Start(t, Options{TLS: true, Password: "pw"})
	if !strings.HasPrefix(s.URL(), "rediss://:pw@127.0.0.1:") {
		t.Errorf("URL() = %q, want rediss:// with the password", s.URL())
	}
	if s.CAFile() == "" || s.CertPool() == nil {
		t.Fatal("no CA with TLS")
	}
	if err := client(t, s, nil).Ping(ctx).Err(); err != nil {
		t.Fatalf("PING over TLS: %v", err)
	}
	// Without the CA the server is not trusted.
	err := client(t, s, func(o *redis.Options) { o.TLSConfig = &tls.Config{ServerName: "127.0.0.1"} }).Ping(ctx).Err()
	if err == nil {
		t.Error("PING succeeded without trusting the test CA")
	}
	// Plain TCP is not served.
	err = client(t, s, func(o *redis.Options) { o.TLSConfig = nil }).Ping(ctx).Err()
	if err == nil {
		t.Error("PING succeeded over plain TCP")
	}
	s.Restart(t)
	if err := client(t, s, nil).Ping(ctx).Err(); err != nil {
		t.Fatalf("PING over TLS after Restart: %v", err)
	}
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := Start(t, Options{TLS: true, ClientCerts: true})
	if err := client(t, s, nil).Ping(ctx).Err(); err != nil {
		t.Fatalf("PING with the client certificate: %v", err)
	}
	err := client(t, s, func(o *redis.Options) { o.TLSConfig.Certificates = nil }).Ping(ctx).Err()
	if err == nil {
		t.Error("PING succeeded without a client certificate")
	}
	if s.ClientCertFile() == "" || s.ClientKeyFile() == "" {
		t.Error("no client certificate files")
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := Start(t, Options{})
	c := client(t, s, func(o *redis.Options) { o.ReadTimeout = 200 * time.Millisecond })
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	s.Pause()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Error("PING answered while the server is paused")
	}
	s.Resume()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("PING after Resume: %v", err)
	}
	s.Pause() // Stop (at cleanup) kills a paused server too
}

// TestReaped checks that the server's process is gone once the test that
// started it has ended.
func TestReaped(t *testing.T) {
	t.Parallel()
	var pid int
	t.Run("server", func(t *testing.T) {
		s := Start(t, Options{})
		s.mu.Lock()
		pid = s.proc.cmd.Process.Pid
		s.mu.Unlock()
	})
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d after the test: kill(0) = %v, want ESRCH (exited and reaped)", pid, err)
	}
}
