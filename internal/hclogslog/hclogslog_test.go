package hclogslog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestBridge(t *testing.T) {
	tests := []struct {
		name  string
		level hclog.Level
		log   func(*slog.Logger)
		want  map[string]any // nil: nothing written
	}{
		{"warn with attrs", hclog.Info, func(l *slog.Logger) { l.Warn("spec violation", "id", 7) },
			map[string]any{"@level": "warn", "@message": "spec violation", "@module": "mcphost.srv", "id": float64(7)}},
		{"debug below level", hclog.Info, func(l *slog.Logger) { l.Debug("noise") }, nil},
		{"debug at level", hclog.Debug, func(l *slog.Logger) { l.Debug("detail") },
			map[string]any{"@level": "debug", "@message": "detail", "@module": "mcphost.srv"}},
		{"error", hclog.Error, func(l *slog.Logger) { l.Error("broken", "err", "x") },
			map[string]any{"@level": "error", "@message": "broken", "@module": "mcphost.srv", "err": "x"}},
		{"groups and With", hclog.Info, func(l *slog.Logger) {
			l.With("session", "s1").WithGroup("req").Info("got", slog.Group("body", "n", 2), "m", "tools/call")
		}, map[string]any{"@level": "info", "@message": "got", "@module": "mcphost.srv", "session": "s1", "req.body.n": float64(2), "req.m": "tools/call"}},
		{"trace below debug", hclog.Trace, func(l *slog.Logger) { l.Log(nil, slog.LevelDebug-4, "fine") },
			map[string]any{"@level": "trace", "@message": "fine", "@module": "mcphost.srv"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := hclog.New(&hclog.LoggerOptions{Name: "mcphost", Level: tt.level, Output: &buf, JSONFormat: true}).Named("srv")
			tt.log(New(l))
			if tt.want == nil {
				if buf.Len() != 0 {
					t.Fatalf("wrote %q, want nothing", buf.String())
				}
				return
			}
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("not one JSON line: %q: %v", buf.String(), err)
			}
			delete(got, "@timestamp")
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}
