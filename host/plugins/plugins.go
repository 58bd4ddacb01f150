// Package plugins runs mcphost's out-of-process plugins with
// hashicorp/go-plugin: each binary runs from a private, read-only copy in the
// host's run directory, which is hashed while it is copied and must match the
// pinned sha256; a restart runs the same copy after checking it is the same
// file, unchanged (else it is copied and hashed again). So the binary cannot
// be swapped between check and exec. Plugins
// speak gRPC only, with AutoMTLS; their logs go into the host's log under
// their name. One process serves every server that uses a plugin; a plugin
// that dies is restarted on next use, after a backoff.
package plugins

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/host/supervisor"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/sdk"
)

// RunDirPrefix names the runtime's private directories in os.TempDir:
// RunDirPrefix-RANDOM, each locked by its host while it lives.
const RunDirPrefix = "mcphost-plugins"

// DefaultStartTimeout bounds a plugin's start (go-plugin's default is a minute).
const DefaultStartTimeout = 10 * time.Second

// Sentinel errors.
var (
	ErrNotPinned      = errors.New("plugin is not pinned")
	ErrUnknown        = errors.New("no such plugin")
	ErrClosed         = errors.New("plugin runtime is closed")
	ErrUnsafeLocation = errors.New("plugin location is unsafe")
)

// Options configures a Runtime. Nil options mean defaults.
type Options struct {
	// Logger is the host's logger; plugin logs appear under "plugin.NAME". OPTIONAL.
	Logger hclog.Logger
	// StartTimeout bounds a start. OPTIONAL: DefaultStartTimeout.
	StartTimeout time.Duration
	// Env is the plugins' environment (go-plugin's SkipHostEnv is set: the
	// host's environment is never passed wholesale). OPTIONAL: PATH and HOME
	// from the host.
	Env []string
	// OnStart is told each plugin process's pid when it starts. OPTIONAL.
	OnStart func(name string, pid int)
	// OnRestart is told each start of a plugin after its first (a
	// restart after it died). OPTIONAL.
	OnRestart func(name string)
	// Telemetry traces the plugin RPCs the runtime makes itself
	// (GetHeaders). OPTIONAL.
	Telemetry *telemetry.Telemetry
	// DisableDataSocket keeps transport messages on the gRPC stream instead
	// of a plugin's data socket. OPTIONAL.
	DisableDataSocket bool
	// CacheDir keeps the verified copies of plugin binaries across runs
	// (see cache.go). OPTIONAL: mcphost/plugins in the user's cache
	// directory; "-": none (every runtime copies and hashes).
	CacheDir string
}

// Runtime starts and keeps plugin processes. Its methods are safe for concurrent use.
type Runtime struct {
	cfg    *config.Config
	opts   Options
	log    hclog.Logger
	runDir *supervisor.RunDir

	mu     sync.Mutex
	procs  map[string]*proc
	closed bool
}

// New returns a runtime for the plugins of cfg. It starts nothing until asked.
func New(cfg *config.Config, opts *Options) (*Runtime, error) {
	r := &Runtime{cfg: cfg, procs: map[string]*proc{}}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.Logger == nil {
		r.opts.Logger = hclog.NewNullLogger()
	}
	if r.opts.StartTimeout <= 0 {
		r.opts.StartTimeout = DefaultStartTimeout
	}
	if r.opts.Env == nil {
		for _, k := range []string{"PATH", "HOME", "TMPDIR", "LANG"} {
			if v, ok := os.LookupEnv(k); ok {
				r.opts.Env = append(r.opts.Env, k+"="+v)
			}
		}
	}
	r.log = r.opts.Logger
	// Locked for the host's lifetime; the run directories of dead hosts
	// (lock free) are removed first.
	dir, err := supervisor.NewRunDir(RunDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("creating the plugin run directory: %w", err)
	}
	r.runDir = dir
	return r, nil
}

// proc is one plugin's process, started on demand.
type proc struct {
	p *config.Plugin

	mu        sync.Mutex
	exe       string      // the private, verified copy of the binary (kept for restarts)
	exeInfo   os.FileInfo // the copy as verified: a restart runs it only unchanged
	sockDir   string      // the socket directory of the running process
	client    *goplugin.Client
	rpc       goplugin.ClientProtocol
	pid       int
	starts    int
	startedAt time.Time
	failures  int // consecutive failed starts and early deaths
	retryAt   time.Time
	lastErr   error
	// interceptor is the interceptor client of the process whose protocol
	// is interceptorOf: one per process, so that its identity tells a
	// caller that the plugin was restarted.
	interceptor   sdk.InterceptorClient
	interceptorOf goplugin.ClientProtocol
}

// Status describes a plugin for `mcphost plugins list`.
type Status struct {
	Name     string   `json:"name"`
	Path     string   `json:"path"`
	Pinned   string   `json:"sha256,omitempty"`
	Running  bool     `json:"running"`
	PID      int      `json:"pid,omitempty"`
	Starts   int      `json:"starts"`
	Error    string   `json:"error,omitempty"`
	Provides []string `json:"provides,omitempty"`
}

// Status reports every configured plugin.
func (r *Runtime) Status() []Status {
	var out []Status
	for _, p := range r.cfg.Plugins {
		st := Status{Name: p.Name, Path: p.Path, Pinned: p.Pin()}
		if l := p.Locked; l != nil {
			for _, t := range l.Transports {
				st.Provides = append(st.Provides, "transport "+t)
			}
			for _, a := range l.AuthSchemes {
				st.Provides = append(st.Provides, "auth "+a)
			}
			if l.Headers {
				st.Provides = append(st.Provides, "headers")
			}
			if l.Interceptor {
				st.Provides = append(st.Provides, "interceptor")
			}
		}
		r.mu.Lock()
		pr := r.procs[p.Name]
		r.mu.Unlock()
		if pr != nil {
			pr.mu.Lock()
			st.Running = pr.client != nil && !pr.client.Exited()
			st.PID, st.Starts = pr.pid, pr.starts
			if pr.lastErr != nil {
				st.Error = pr.lastErr.Error()
			}
			pr.mu.Unlock()
		}
		out = append(out, st)
	}
	return out
}

// Transport returns the transport client of the plugin that provides the
// named transport, starting (or restarting) the plugin if needed.
func (r *Runtime) Transport(ctx context.Context, transport string) (sdk.Transport, string, error) {
	p := r.cfg.PluginFor(transport)
	if p == nil {
		return nil, "", fmt.Errorf("no plugin provides transport %q", transport)
	}
	t, err := dispenseAs[sdk.Transport](ctx, r, p.Name, sdk.KindTransport)
	if err != nil {
		return nil, p.Name, err
	}
	if ds, ok := t.(sdk.DataSocketSetter); ok && !r.opts.DisableDataSocket {
		if pr, err := r.proc(p.Name); err == nil {
			pr.mu.Lock()
			ds.SetDataSocketDir(pr.sockDir)
			pr.mu.Unlock()
		}
	}
	return t, p.Name, nil
}

// Dispense returns the client of one kind (sdk.KindInfo, …) of the named
// plugin, starting the plugin if it is not running.
func (r *Runtime) Dispense(ctx context.Context, name, kind string) (any, error) {
	pr, err := r.proc(name)
	if err != nil {
		return nil, err
	}
	rpc, err := pr.ensure(ctx, r)
	if err != nil {
		return nil, err
	}
	raw, err := rpc.Dispense(kind)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	return raw, nil
}

// Info starts the named plugin (if needed) and asks what it provides.
func (r *Runtime) Info(ctx context.Context, name string) (*sdk.Info, error) {
	raw, err := r.Dispense(ctx, name, sdk.KindInfo)
	if err != nil {
		return nil, err
	}
	info, err := raw.(sdk.InfoClient).GetInfo(ctx)
	if err != nil {
		return nil, &NotRespondingError{Plugin: name, Err: err}
	}
	return info, nil
}

func (r *Runtime) proc(name string) (*proc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if pr, ok := r.procs[name]; ok {
		return pr, nil
	}
	p := r.cfg.Plugin(name)
	if p == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknown, name)
	}
	pr := &proc{p: p}
	r.procs[name] = pr
	return pr, nil
}

// ensure returns a live connection to the plugin, starting it if it is not
// running. A plugin that failed to start or crashed is retried after a
// backoff (1 s doubling to 30 s).
func (pr *proc) ensure(ctx context.Context, r *Runtime) (goplugin.ClientProtocol, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.client != nil && !pr.client.Exited() {
		return pr.rpc, nil
	}
	if pr.client != nil { // it died: restart at once the first time, then back off
		pr.client.Kill()
		pr.client, pr.rpc = nil, nil
		if time.Since(pr.startedAt) > stableAfter {
			pr.failures = 0 // it had been healthy: this is a fresh failure
		}
		pr.failures++
		pr.retryAt = time.Now().Add(backoff(pr.failures - 1))
		pr.lastErr = fmt.Errorf("plugin %s exited unexpectedly; see its log above", pr.p.Name)
		r.log.Warn("plugin exited", "plugin", pr.p.Name)
	}
	if wait := time.Until(pr.retryAt); wait > 0 {
		return nil, fmt.Errorf("%w (restarting in %s)", pr.lastErr, wait.Round(time.Millisecond))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	client, rpc, pid, err := r.start(pr)
	if err != nil {
		pr.failures++
		pr.retryAt = time.Now().Add(backoff(pr.failures))
		pr.lastErr = err
		return nil, err
	}
	pr.client, pr.rpc, pr.pid, pr.lastErr = client, rpc, pid, nil
	pr.starts++
	pr.startedAt = time.Now()
	if r.opts.OnStart != nil {
		r.opts.OnStart(pr.p.Name, pid)
	}
	if pr.starts > 1 && r.opts.OnRestart != nil {
		r.opts.OnRestart(pr.p.Name)
	}
	return rpc, nil
}

// stableAfter is how long a plugin must run before a death no longer counts
// toward the backoff: a plugin that keeps dying soon after starting is
// restarted ever more slowly (a circuit breaker), one that ran fine is
// restarted at once.
const stableAfter = 30 * time.Second

// backoff is the wait after n consecutive failures: none for 0, then 1 s
// doubling to 30 s.
func backoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := time.Second
	for i := 1; i < n && d < 30*time.Second; i++ {
		d *= 2
	}
	return min(d, 30*time.Second)
}

// start verifies and starts one plugin process.
func (r *Runtime) start(pr *proc) (*goplugin.Client, goplugin.ClientProtocol, int, error) {
	p := pr.p
	pin := p.Pin()
	if pin == "" {
		return nil, nil, 0, fmt.Errorf("%w: %s (%s) has no sha256; run `mcphost plugins lock` to record the binary's checksum", ErrNotPinned, p.Name, p.Path)
	}
	sum, err := hex.DecodeString(pin)
	if err != nil || len(sum) != sha256.Size {
		return nil, nil, 0, fmt.Errorf("plugin %s: invalid sha256 %q", p.Name, pin)
	}
	// Run a private copy, made once and kept for restarts: the checksum is
	// verified on exactly the bytes written to the file that is executed,
	// which nobody else can write (0500 in the host's 0700 run directory);
	// a restart checks that the copy is still that file, unchanged.
	// The supervisor (an exec of this host's binary) starts while the
	// binary is verified.
	early, err := launchEarly(p.Name)
	if err != nil {
		return nil, nil, 0, err
	}
	defer early.abort() // unless a runner ran it
	if pr.exe != "" && !unchanged(pr.exe, pr.exeInfo) {
		r.log.Warn("the private copy of the plugin changed since it was verified: copying it again", "plugin", p.Name)
		os.Remove(pr.exe)
		pr.exe, pr.exeInfo = "", nil
	}
	if pr.exe == "" {
		if err := CheckLocation(p.Path); err != nil {
			return nil, nil, 0, err
		}
		exe, info, err := r.privateCopy(p, sum)
		if err != nil {
			return nil, nil, 0, err
		}
		pr.exe, pr.exeInfo = exe, info
	}
	var run *pluginRunner
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: sdk.ClientPlugins(),
		// go-plugin makes the plugin's socket directory in the run
		// directory and names it in PLUGIN_UNIX_SOCKET_DIR; the plugin
		// creates its sockets there, and checkAddr (and the SDK, for data
		// sockets) hold it to that.
		UnixSocketConfig: &goplugin.UnixSocketConfig{TempDir: r.runDir.Path},
		RunnerFunc: func(_ hclog.Logger, cmd *exec.Cmd, sockDir string) (runner.Runner, error) {
			run = &pluginRunner{
				name:    p.Name,
				sockDir: sockDir,
				early:   early,
				spec: supervisor.Spec{
					Path: pr.exe,
					Args: []string{pr.exe},
					// go-plugin's variables (cookie, certificate, socket
					// directory) after the host's few.
					Env:    append(append([]string(nil), r.opts.Env...), cmd.Env...),
					Stop:   pluginStop,
					RunDir: r.runDir.Path,
				},
			}
			pr.sockDir = sockDir
			return run, nil
		},
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		// The plugin's stderr is untrusted: its lines land under its own name,
		// bounded in length, and scrubbed of anything that looks like a secret.
		Logger:              redact.Logger(r.log.Named("plugin." + p.Name)),
		PluginLogBufferSize: 64 << 10,
		StartTimeout:        r.opts.StartTimeout,
		SkipHostEnv:         true,
	})
	// Start runs the plugin and reads its handshake line; the runner checks
	// the address it announces before go-plugin records it, so a refused
	// address is never dialled, not even by Kill.
	if _, err := client.Start(); err != nil {
		client.Kill()
		if errors.Is(err, ErrRefusedAddress) {
			return nil, nil, 0, fmt.Errorf("plugin %s refused: %w", p.Name, err)
		}
		return nil, nil, 0, fmt.Errorf("starting plugin %s: %w", p.Name, err)
	}
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, nil, 0, fmt.Errorf("connecting to plugin %s: %w", p.Name, err)
	}
	if err := rpc.Ping(); err != nil {
		client.Kill()
		return nil, nil, 0, fmt.Errorf("plugin %s does not answer: %w", p.Name, err)
	}
	pid := run.pid()
	r.log.Debug("plugin started", "plugin", p.Name, "pid", pid)
	return client, rpc, pid, nil
}

// CheckLocation refuses a plugin whose directory is a symlink or writable by
// group or others, or whose binary is writable by group or others, and one
// whose directory or binary belongs to a user other than the current one and
// root.
func CheckLocation(path string) error {
	if err := checkOwners(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("plugin directory %s: %w", dir, err)
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%w: the plugin directory %s is a symlink", ErrUnsafeLocation, dir)
	}
	if config.OpenTo(st, 0o022) {
		return fmt.Errorf("%w: the plugin directory %s is writable by group or others (mode %v)", ErrUnsafeLocation, dir, st.Mode().Perm())
	}
	fst, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("plugin %s: %w", path, err)
	}
	if !fst.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrUnsafeLocation, path)
	}
	if config.OpenTo(fst, 0o022) {
		return fmt.Errorf("%w: %s is writable by group or others (mode %v)", ErrUnsafeLocation, path, fst.Mode().Perm())
	}
	return nil
}

func checkOwners(path string) error {
	for _, p := range []string{filepath.Dir(path), path} {
		var oe *config.OwnerError
		if err := config.CheckOwner(p); errors.As(err, &oe) {
			return fmt.Errorf("%w: %v", ErrUnsafeLocation, err)
		}
	}
	return nil
}

// copyBinary copies a plugin into the run directory, hashing what it
// writes, and keeps the copy only if that matches sum (the pinned sha256).
// It returns the copy's path and what it is as verified.
func (r *Runtime) copyBinary(p *config.Plugin, sum []byte) (string, os.FileInfo, error) {
	return copyVerified(p, sum, r.runDir.Path, p.Name+"-*")
}

// copyVerified copies plugin p into a new file in dir (named by pattern, as
// os.CreateTemp names), hashing what it writes, and keeps the copy (0500)
// only if that matches sum.
func copyVerified(p *config.Plugin, sum []byte, dir, pattern string) (string, os.FileInfo, error) {
	src, err := os.Open(p.Path)
	if err != nil {
		return "", nil, fmt.Errorf("plugin %s: %w", p.Name, err)
	}
	defer src.Close()
	dst, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", nil, err
	}
	fail := func(err error) (string, os.FileInfo, error) {
		dst.Close()
		os.Remove(dst.Name())
		return "", nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(dst, h), src); err != nil {
		return fail(fmt.Errorf("copying plugin %s: %w", p.Name, err))
	}
	if got := h.Sum(nil); !bytes.Equal(got, sum) {
		return fail(fmt.Errorf("plugin %s refused: %s does not match its pinned sha256 %x (run `mcphost plugins lock` if you updated it on purpose): %w", p.Name, p.Path, sum, goplugin.ErrChecksumsDoNotMatch))
	}
	if err := dst.Chmod(0o500); err != nil {
		return fail(err)
	}
	if err := dst.Close(); err != nil {
		os.Remove(dst.Name())
		return "", nil, err
	}
	info, err := os.Stat(dst.Name())
	if err != nil {
		os.Remove(dst.Name())
		return "", nil, err
	}
	return dst.Name(), info, nil
}

// privateCopy returns a verified private copy of plugin p pinned at sum:
// the cached one if it is as it was hashed, else a new one (cached when the
// cache can be used).
func (r *Runtime) privateCopy(p *config.Plugin, sum []byte) (string, os.FileInfo, error) {
	dir := r.cacheDir()
	if dir == "" {
		return r.copyBinary(p, sum)
	}
	if exe, info, ok := r.cached(dir, p, sum); ok {
		return exe, info, nil
	}
	src, err := os.Stat(p.Path)
	if err != nil {
		return "", nil, fmt.Errorf("plugin %s: %w", p.Name, err)
	}
	exe, _, err := copyVerified(p, sum, dir, ".copy-"+p.Name+"-*")
	if err != nil {
		return "", nil, err
	}
	return r.cache(dir, p, sum, exe, src)
}

// unchanged reports whether the file at path is still the verified copy
// was: the same file (device and inode), of the same size, modification
// time and mode, and, where files have one, change time.
func unchanged(path string, was os.FileInfo) bool {
	now, err := os.Stat(path)
	if err != nil || was == nil {
		return false
	}
	if a, ok := identity(now); ok {
		b, _ := identity(was)
		return a == b
	}
	return os.SameFile(now, was) && now.Size() == was.Size() && now.ModTime().Equal(was.ModTime()) && now.Mode() == was.Mode()
}

// FileSHA256 returns the hex sha256 of a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Close stops every plugin process and removes the run directory.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	procs := make([]*proc, 0, len(r.procs))
	for _, pr := range r.procs {
		procs = append(procs, pr)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, pr := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr.mu.Lock()
			if pr.client != nil {
				pr.client.Kill() // a graceful shutdown first, then the supervisor ends the tree
			}
			pr.mu.Unlock()
		}()
	}
	wg.Wait()
	return r.runDir.Close()
}

// RunDir is the runtime's private directory: the plugins' copies and sockets.
func (r *Runtime) RunDir() string { return r.runDir.Path }

// Names returns the configured plugins' names, sorted.
func (r *Runtime) Names() []string {
	var out []string
	for _, p := range r.cfg.Plugins {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// Headers runs a server's headers helper through the plugin that provides
// headers and returns the dynamic headers.
func (r *Runtime) Headers(ctx context.Context, s *config.Server) (map[string]string, error) {
	var p *config.Plugin
	for _, c := range r.cfg.Plugins {
		if c.Locked != nil && c.Locked.Headers {
			p = c
			break
		}
	}
	if p == nil {
		return nil, fmt.Errorf("server %s has a headers_helper, but no locked plugin provides headers (install headers-helper and run `mcphost plugins lock`)", s.Name)
	}
	h, err := dispenseAs[sdk.Headers](ctx, r, p.Name, sdk.KindHeaders)
	if err != nil {
		return nil, err
	}
	cfg, _ := json.Marshal(map[string]any{"command": s.HeadersHelper})
	ctx, span := r.opts.Telemetry.StartPluginRPC(ctx, p.Name, "GetHeaders")
	resp, err := h.GetHeaders(ctx, &sdk.HeadersRequest{ServerName: s.Name, ServerURL: s.URL, Config: cfg})
	span.End(err)
	if err != nil {
		return nil, &NotRespondingError{Plugin: p.Name, Err: err}
	}
	if err := resp.Diagnostics.Err(); err != nil {
		return nil, fmt.Errorf("headers for server %s: %w", s.Name, err)
	}
	return resp.Headers, nil
}

// Auth returns the client of the plugin that provides an auth scheme,
// starting the plugin if needed, and the plugin's name.
func (r *Runtime) Auth(ctx context.Context, scheme string) (sdk.AuthClient, string, error) {
	p := r.cfg.PluginForScheme(scheme)
	if p == nil {
		return nil, "", fmt.Errorf("no plugin provides auth scheme %q", scheme)
	}
	a, err := dispenseAs[sdk.AuthClient](ctx, r, p.Name, sdk.KindAuth)
	return a, p.Name, err
}

// Interceptor returns the interceptor client of the named plugin, starting
// (or restarting) it if needed. The client is bound to the plugin's current
// process, and the same value is returned for as long as that process runs:
// call Interceptor again for each operation, so that a plugin that crashed
// is restarted (its supervisor's backoff applies) and a new client
// returned. A plugin not locked as an interceptor is an error.
func (r *Runtime) Interceptor(ctx context.Context, name string) (sdk.Interceptor, error) {
	p := r.cfg.Plugin(name)
	if p == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknown, name)
	}
	if p.Locked == nil || !p.Locked.Interceptor {
		return nil, fmt.Errorf("plugin %s is not locked as an interceptor (run `mcphost plugins lock`)", name)
	}
	pr, err := r.proc(name)
	if err != nil {
		return nil, err
	}
	rpc, err := pr.ensure(ctx, r)
	if err != nil {
		return nil, err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.interceptor != nil && pr.interceptorOf == rpc {
		return pr.interceptor, nil
	}
	raw, err := rpc.Dispense(sdk.KindInterceptor)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	ic, ok := raw.(sdk.InterceptorClient)
	if !ok {
		return nil, fmt.Errorf("plugin %s does not serve %s", name, sdk.KindInterceptor)
	}
	pr.interceptor, pr.interceptorOf = ic, rpc
	return ic, nil
}

// dispenseAs dispenses one kind of a plugin as the SDK interface of that kind.
func dispenseAs[T any](ctx context.Context, r *Runtime, name, kind string) (T, error) {
	var zero T
	raw, err := r.Dispense(ctx, name, kind)
	if err != nil {
		return zero, err
	}
	v, ok := raw.(T)
	if !ok {
		return zero, fmt.Errorf("plugin %s does not serve %s", name, kind)
	}
	return v, nil
}
