// Package hclogslog bridges log/slog into hclog: libraries that log with a
// *slog.Logger (the go-sdk) write through the host's hclog.Logger, under its
// name, level, format (text or JSON) and redaction.
package hclogslog

import (
	"context"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// New returns a *slog.Logger that writes to l.
func New(l hclog.Logger) *slog.Logger { return slog.New(&handler{l: l}) }

// handler is a slog.Handler writing to an hclog.Logger.
type handler struct {
	l      hclog.Logger
	prefix string // of the open groups, each followed by "."
}

// Level maps a slog level to hclog's: below Debug is Trace.
func Level(l slog.Level) hclog.Level {
	switch {
	case l < slog.LevelDebug:
		return hclog.Trace
	case l < slog.LevelInfo:
		return hclog.Debug
	case l < slog.LevelWarn:
		return hclog.Info
	case l < slog.LevelError:
		return hclog.Warn
	}
	return hclog.Error
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool {
	switch Level(l) {
	case hclog.Trace:
		return h.l.IsTrace()
	case hclog.Debug:
		return h.l.IsDebug()
	case hclog.Info:
		return h.l.IsInfo()
	case hclog.Warn:
		return h.l.IsWarn()
	}
	return h.l.IsError()
}

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	args := make([]any, 0, 2*r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		args = appendAttr(args, h.prefix, a)
		return true
	})
	h.l.Log(Level(r.Level), r.Message, args...)
	return nil
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var args []any
	for _, a := range attrs {
		args = appendAttr(args, h.prefix, a)
	}
	return &handler{l: h.l.With(args...), prefix: h.prefix}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &handler{l: h.l, prefix: h.prefix + name + "."}
}

// appendAttr appends a's key and value to args, a group's members each
// under its group's name.
func appendAttr(args []any, prefix string, a slog.Attr) []any {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, m := range v.Group() {
			args = appendAttr(args, p, m)
		}
		return args
	}
	if a.Key == "" {
		return args
	}
	return append(args, prefix+a.Key, v.Any())
}
