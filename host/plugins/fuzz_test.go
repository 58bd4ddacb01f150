package plugins

import (
	"context"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/mcphost/mcphost/sdk"
)

// fuzzSockDir stands for the host's socket directory; "SOCKDIR" in the
// seeds (testdata/fuzz) is replaced by it.
const fuzzSockDir = "/run/mcphost-plugins-0/plugin-dir1"

// accepted reports whether an address is one the host may dial: a socket
// directly in the socket directory, or a loopback IP literal.
func accepted(network, addr string) bool {
	switch network {
	case "unix":
		return filepath.Dir(addr) == fuzzSockDir && filepath.Clean(addr) == addr
	case "tcp":
		ap, err := netip.ParseAddrPort(addr)
		return err == nil && ap.Addr().Unmap().IsLoopback()
	}
	return false
}

// FuzzCheckAddr: checkAddr never panics and accepts only what accepted allows.
func FuzzCheckAddr(f *testing.F) {
	f.Fuzz(func(t *testing.T, network, addr string) {
		addr = strings.ReplaceAll(addr, "SOCKDIR", fuzzSockDir)
		if checkAddr(network, addr, fuzzSockDir) == nil && !accepted(network, addr) {
			t.Fatalf("accepted %s %q", network, addr)
		}
	})
}

// lineRunner is a plugin process that only prints a handshake line.
type lineRunner struct {
	pluginRunner
	out  io.ReadCloser
	done chan struct{}
	once sync.Once
}

func (r *lineRunner) Start(context.Context) error     { return nil }
func (r *lineRunner) Stdout() io.ReadCloser           { return r.out }
func (r *lineRunner) Stderr() io.ReadCloser           { return io.NopCloser(strings.NewReader("")) }
func (r *lineRunner) ID() string                      { return "1" }
func (r *lineRunner) Wait(context.Context) error      { <-r.done; return nil }
func (r *lineRunner) Kill(context.Context) error      { r.once.Do(func() { close(r.done) }); return nil }
func (r *lineRunner) Diagnose(context.Context) string { return "" }

// FuzzHandshakeLine feeds a plugin's handshake line (CORE|APP|NET|ADDR|PROTO…)
// through go-plugin's own parser with the host's runner: Start never panics,
// and an address it returns is one the host may dial. Nothing is dialled.
func FuzzHandshakeLine(f *testing.F) {
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.ReplaceAll(line, "SOCKDIR", fuzzSockDir)
		var run *lineRunner
		client := goplugin.NewClient(&goplugin.ClientConfig{
			HandshakeConfig:  sdk.Handshake,
			VersionedPlugins: sdk.ClientPlugins(),
			RunnerFunc: func(hclog.Logger, *exec.Cmd, string) (runner.Runner, error) {
				run = &lineRunner{
					pluginRunner: pluginRunner{sockDir: fuzzSockDir},
					out:          io.NopCloser(strings.NewReader(line + "\n")),
					done:         make(chan struct{}),
				}
				return run, nil
			},
			UnixSocketConfig: &goplugin.UnixSocketConfig{TempDir: t.TempDir()},
			AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
			StartTimeout:     time.Second,
			Logger:           hclog.NewNullLogger(),
		})
		addr, err := client.Start()
		if err == nil {
			network := addr.Network()
			a := addr.String()
			if tcp, ok := addr.(*net.TCPAddr); ok {
				a = tcp.AddrPort().String()
			}
			if !accepted(network, a) {
				t.Errorf("go-plugin accepted %s %s from %q", network, a, line)
			}
		}
		if run != nil {
			run.Kill(context.Background())
		}
	})
}
