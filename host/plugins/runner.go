package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin/runner"

	"github.com/mcphost/mcphost/host/supervisor"
)

// ErrRefusedAddress is returned when a plugin's handshake names an address
// the host will not dial.
var ErrRefusedAddress = errors.New("refused plugin address")

// killGrace bounds the wait for a plugin's supervisor to end its tree before
// the host kills the process group itself.
const killGrace = 2 * time.Second

// pluginRunner is go-plugin's runner for one plugin process. It runs the
// verified private copy under a supervisor (so that nothing the plugin
// starts outlives the host), with stdin on /dev/null, and checks the
// handshake's address in PluginToHost: inside go-plugin's Start, before the
// address is recorded, so that nothing (Client, Kill) can ever dial a
// refused address.
type pluginRunner struct {
	name    string
	spec    supervisor.Spec
	sockDir string

	stdout, stderr *os.File // read ends, for go-plugin
	proc           *supervisor.Process

	// early, when set, is the plugin's supervisor, launched while the
	// binary was verified, with the write ends of stdout and stderr.
	early *launch
}

// launch is a supervisor launched ahead of its plugin, with the plugin's
// output pipes. Exactly one of run (by Start) and abort must happen.
type launch struct {
	l          *supervisor.Launcher
	outR, errR *os.File
	used       bool
}

// launchEarly launches a plugin's supervisor and output pipes, so that its
// start overlaps the verification of the binary.
func launchEarly(name string) (*launch, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	l, err := supervisor.Launch(nil, outW, errW)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	return &launch{l: l, outR: outR, errR: errR}, nil
}

// abort ends an early launch that ran no plugin.
func (e *launch) abort() {
	if e == nil || e.used {
		return
	}
	e.used = true
	e.l.Abort()
	e.outR.Close()
	e.errR.Close()
}

var _ runner.Runner = (*pluginRunner)(nil)

func (r *pluginRunner) Start(context.Context) error {
	if e := r.early; e != nil && !e.used {
		e.used = true
		p, err := e.l.Start(&r.spec)
		if err != nil {
			e.outR.Close()
			e.errR.Close()
			return fmt.Errorf("plugin %s: %w", r.name, err)
		}
		r.proc, r.stdout, r.stderr = p, e.outR, e.errR
		return nil
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("plugin %s: %w", r.name, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return fmt.Errorf("plugin %s: %w", r.name, err)
	}
	p, err := supervisor.Start(&r.spec, nil, outW, errW)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return fmt.Errorf("plugin %s: %w", r.name, err)
	}
	r.proc, r.stdout, r.stderr = p, outR, errR
	return nil
}

// Wait waits for the plugin to exit (not for the sweep of its tree, so that
// go-plugin marks it exited at once). go-plugin calls it once stdout and
// stderr reached end of file.
func (r *pluginRunner) Wait(context.Context) error {
	<-r.proc.Exited()
	r.stdout.Close()
	r.stderr.Close()
	return r.proc.Err()
}

// Kill ends the plugin and everything it started.
func (r *pluginRunner) Kill(context.Context) error {
	if r.proc == nil {
		return nil
	}
	r.proc.Stop()
	t := time.NewTimer(killGrace)
	defer t.Stop()
	select {
	case <-r.proc.Done():
	case <-t.C:
		r.proc.Kill()
	}
	return nil
}

func (r *pluginRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *pluginRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *pluginRunner) Name() string          { return r.name }

func (r *pluginRunner) ID() string {
	if r.proc == nil {
		return ""
	}
	return strconv.Itoa(r.proc.Pid)
}

func (r *pluginRunner) Diagnose(context.Context) string { return "" }

// PluginToHost checks the address of the plugin's handshake line.
func (r *pluginRunner) PluginToHost(network, addr string) (string, string, error) {
	if err := checkAddr(network, addr, r.sockDir); err != nil {
		return "", "", err
	}
	return network, addr, nil
}

func (r *pluginRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// pid is the plugin's process id, 0 before Start.
func (r *pluginRunner) pid() int {
	if r.proc == nil {
		return 0
	}
	return r.proc.Pid
}

// checkAddr accepts a plugin's listener only on a unix socket directly inside
// the directory the host gave it, or on TCP at a loopback IP literal. Names
// are refused rather than resolved: the check must not depend on DNS, and a
// lookup is itself a request to a name the plugin chose.
func checkAddr(network, addr, sockDir string) error {
	switch network {
	case "unix":
		if sockDir == "" || !filepath.IsAbs(addr) || filepath.Clean(addr) != addr || filepath.Dir(addr) != filepath.Clean(sockDir) {
			return fmt.Errorf("%w: the plugin's socket %q is outside the host's directory", ErrRefusedAddress, addr)
		}
		return nil
	case "tcp":
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			return fmt.Errorf("%w: the plugin listens on %q, not on a loopback IP address and port", ErrRefusedAddress, addr)
		}
		if !ap.Addr().Unmap().IsLoopback() || ap.Port() == 0 {
			return fmt.Errorf("%w: the plugin listens on %s, not on loopback", ErrRefusedAddress, ap)
		}
		return nil
	}
	return fmt.Errorf("%w: the plugin announced an unsupported network %q", ErrRefusedAddress, network)
}

// pluginStop is a plugin's stop sequence once go-plugin's graceful shutdown
// (over gRPC) is over or was not possible.
var pluginStop = []supervisor.Step{{Signal: syscall.SIGKILL, Grace: time.Second}}
