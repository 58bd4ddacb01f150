package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
)

// reloadDebounce is how long the configuration must be left alone after a
// change before it is reloaded: an editor's save (write, rename, chmod) and
// a script's several edits become one reload.
const reloadDebounce = 300 * time.Millisecond

// reloader reloads the configuration of a running `mcphost serve` on
// SIGHUP and when a file that makes it changes (config.Config.Watch).
type reloader struct {
	a   *app
	h   *host.Host
	g   *gateway.Gateway
	log hclog.Logger
	// onReload, if set, is told each reload's outcome (telemetry).
	onReload func(outcome string)
	// onApplied, if set, is given each configuration applied (the named
	// endpoints follow it).
	onApplied func(ctx context.Context, cfg *config.Config)

	kick chan struct{} // a reload is asked for (SIGHUP)

	mu     sync.Mutex
	status streamable.ReloadStatus
}

func newReloader(a *app, h *host.Host, g *gateway.Gateway, log hclog.Logger) *reloader {
	return &reloader{a: a, h: h, g: g, log: log, kick: make(chan struct{}, 1),
		status: streamable.ReloadStatus{LoadedAt: time.Now()}}
}

// Status returns the outcome of the last reload (for /readyz).
func (r *reloader) Status() streamable.ReloadStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.status
	s.Errors = slices.Clone(s.Errors)
	return s
}

// request asks for a reload (from the signal handler: it never blocks).
func (r *reloader) request() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// run watches the configuration's files and reloads on a change or a
// request, until ctx is done.
func (r *reloader) run(ctx context.Context) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		r.log.Warn("cannot watch the configuration files; reload with SIGHUP", "error", err)
	}
	var events chan fsnotify.Event
	var errs chan error
	if w != nil {
		defer w.Close()
		events, errs = w.Events, w.Errors
	}
	watched := r.watch(w, nil)
	var debounce *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if debounce != nil {
				debounce.Stop()
			}
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if !r.concerns(ev.Name) {
				continue
			}
			if debounce == nil {
				debounce = time.NewTimer(reloadDebounce)
			} else {
				debounce.Reset(reloadDebounce)
			}
			fire = debounce.C
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			r.log.Warn("watching the configuration files", "error", err)
		case <-fire:
			fire = nil
			r.reload(ctx, "a configuration file changed")
			watched = r.watch(w, watched)
		case <-r.kick:
			r.reload(ctx, "SIGHUP")
			watched = r.watch(w, watched)
		}
	}
}

// watchDirs are the directories to watch for the paths of cfg.Watch: a
// file's directory (editors replace files by renaming, and a file may not
// exist yet), and a directory itself.
func watchDirs(paths []string) []string {
	var dirs []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	slices.Sort(dirs)
	return slices.Compact(dirs)
}

// watch makes w watch the directories of the configuration in effect, and
// returns them (were are those watched before).
func (r *reloader) watch(w *fsnotify.Watcher, were []string) []string {
	if w == nil {
		return nil
	}
	want := watchDirs(r.h.Config().Watch)
	var now []string
	for _, d := range were {
		if !slices.Contains(want, d) {
			w.Remove(d)
		}
	}
	for _, d := range want {
		if slices.Contains(were, d) {
			now = append(now, d)
			continue
		}
		if err := w.Add(d); err == nil {
			now = append(now, d)
		} // (a directory that does not exist yet is not watched: SIGHUP reloads)
	}
	return now
}

// concerns reports whether a change of path may change the configuration.
//
// A Kubernetes ConfigMap volume updates its files by swapping a symlink,
// "..data", in their directory (the files' own names never change): a
// change of that link concerns every file of the directory.
func (r *reloader) concerns(path string) bool { return concerns(r.h.Config().Watch, path) }

// concerns reports whether a change of path concerns one of the files (or
// directories) watch lists.
func concerns(watch []string, path string) bool {
	path = filepath.Clean(path)
	for _, p := range watch {
		if path == p || filepath.Dir(path) == p {
			return true
		}
		if filepath.Base(path) == configMapLink && filepath.Dir(path) == filepath.Dir(p) {
			return true
		}
	}
	return false
}

// configMapLink is the symlink a Kubernetes ConfigMap volume swaps.
const configMapLink = "..data"

// reload loads the configuration again and applies it, or, when it has
// errors, reports them and keeps the configuration in effect.
func (r *reloader) reload(ctx context.Context, why string) {
	cfg, diags := r.a.loadOnly()
	now := time.Now()
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning {
			r.log.Warn("configuration: "+diagLine(d), "detail", d.Detail)
		}
	}
	if diags.HasErrors() {
		var errs []string
		for _, d := range diags {
			if d.Severity != hcl.DiagError {
				continue
			}
			msg := diagLine(d)
			r.log.Error("configuration reload: "+msg, "detail", d.Detail)
			errs = append(errs, msg)
		}
		r.log.Error("configuration reload rejected: the configuration in effect is kept", "reason", why, "errors", len(errs))
		r.record(streamable.ReloadStatus{At: now, Outcome: streamable.ReloadRejected, Errors: errs})
		return
	}
	res, err := r.h.Reload(ctx, cfg, cfg.Settings.DrainTimeout)
	if err != nil {
		r.log.Error("configuration reload rejected: the configuration in effect is kept", "reason", why, "error", err)
		r.record(streamable.ReloadStatus{At: now, Outcome: streamable.ReloadRejected, Errors: []string{err.Error()}})
		return
	}
	r.g.SetDrainTimeout(cfg.Settings.DrainTimeout)
	if r.onApplied != nil {
		r.onApplied(ctx, r.h.Config())
	}
	outcome := streamable.ReloadApplied
	if !res.Changed() {
		outcome = streamable.ReloadUnchanged
	}
	if len(res.RestartNeeded) > 0 {
		r.log.Warn("configuration changes that apply only after a restart of mcphost serve", "changed", res.RestartNeeded)
	}
	r.log.Info("configuration reloaded", "reason", why, "outcome", outcome)
	r.record(streamable.ReloadStatus{At: now, Outcome: outcome, RestartNeeded: res.RestartNeeded})
}

func (r *reloader) record(s streamable.ReloadStatus) {
	r.mu.Lock()
	s.LoadedAt = r.status.LoadedAt
	if s.Outcome != streamable.ReloadRejected {
		s.LoadedAt = s.At
	}
	r.status = s
	r.mu.Unlock()
	if r.onReload != nil {
		r.onReload(s.Outcome)
	}
}

// diagLine is a diagnostic as file:line:col: summary.
func diagLine(d *hcl.Diagnostic) string {
	if d.Subject == nil {
		return d.Summary
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Summary)
}
