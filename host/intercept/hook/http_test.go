package hook

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
)

// hookServer is an HTTP hook endpoint on 127.0.0.1 that records what it
// got and answers with reply.
type hookServer struct {
	*httptest.Server
	mu      sync.Mutex
	headers http.Header
	method  string
	body    map[string]any
}

func newHookServer(t *testing.T, reply func(w http.ResponseWriter, r *http.Request)) *hookServer {
	s := &hookServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.headers, s.method = r.Header.Clone(), r.Method
		_ = json.Unmarshal(b, &s.body)
		s.mu.Unlock()
		reply(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func TestHTTPHook(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply func(w http.ResponseWriter, r *http.Request)
		want  intercept.Verdict
	}{
		{"JSON deny", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on Fridays"}}`)
		}, intercept.Verdict{Action: intercept.Deny, Reason: "not on Fridays"}},
		{"JSON deprecated block", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"decision":"block","reason":"legacy"}`)
		}, intercept.Verdict{Action: intercept.Deny, Reason: "legacy"}},
		{"text is context", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "remember: staging only\n")
		}, intercept.Verdict{Context: "remember: staging only"}},
		{"empty", func(w http.ResponseWriter, r *http.Request) {}, intercept.Verdict{}},
		{"204", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, intercept.Verdict{}},
		{"500 is non-blocking", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"decision":"block","reason":"ignored: not 2xx"}`)
		}, intercept.Verdict{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newHookServer(t, tt.reply)
			f := newHook(t, config.Hook{Event: PreToolUse, URL: s.URL + "/hooks/pre"}, nil)
			got, err := f.check(t, toolCall(`{"command":"ls"}`), intercept.Request)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			assertVerdict(t, got, tt.want)
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.method != http.MethodPost || s.headers.Get("Content-Type") != "application/json" {
				t.Errorf("got %s with Content-Type %q", s.method, s.headers.Get("Content-Type"))
			}
			if s.body["hook_event_name"] != PreToolUse || s.body["tool_name"] != "mcp__db__query" {
				t.Errorf("body = %v", s.body)
			}
		})
	}
}

func TestHTTPHookNon2xxIsLogged(t *testing.T) {
	t.Parallel()
	s := newHookServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	f := newHook(t, config.Hook{Event: PreToolUse, URL: s.URL}, nil)
	if _, err := f.check(t, toolCall(`{}`), intercept.Request); err != nil {
		t.Fatal(err)
	}
	if logs := f.logs.String(); !strings.Contains(logs, "[WARN]") || !strings.Contains(logs, "HTTP status 502") {
		t.Errorf("logs:\n%s", logs)
	}
}

func TestHTTPHookFailures(t *testing.T) {
	t.Parallel()
	t.Run("hang is a timeout", func(t *testing.T) {
		// Real time, kept short: a real socket cannot block durably in a
		// testing/synctest bubble.
		t.Parallel()
		release := make(chan struct{})
		s := newHookServer(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		defer close(release)
		f := newHook(t, config.Hook{Event: PreToolUse, URL: s.URL, Timeout: 300 * time.Millisecond}, nil)
		_, err := f.check(t, toolCall(`{}`), intercept.Request)
		var he *Error
		if !errors.As(err, &he) || !errors.Is(err, errDeadline) {
			t.Fatalf("err = %v, want a timeout", err)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		s := httptest.NewServer(http.NotFoundHandler())
		url := s.URL
		s.Close()
		f := newHook(t, config.Hook{Event: PreToolUse, URL: url}, nil)
		_, err := f.check(t, toolCall(`{}`), intercept.Request)
		var he *Error
		if !errors.As(err, &he) || errors.Is(err, errDeadline) {
			t.Fatalf("err = %v, want a connection error", err)
		}
	})
	t.Run("body over the cap", func(t *testing.T) {
		t.Parallel()
		s := newHookServer(t, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, strings.Repeat("x", MaxStdout+10))
		})
		f := newHook(t, config.Hook{Event: PreToolUse, URL: s.URL}, nil)
		if _, err := f.check(t, toolCall(`{}`), intercept.Request); !errors.Is(err, ErrOutputTooLarge) {
			t.Fatalf("err = %v, want ErrOutputTooLarge", err)
		}
	})
}

func TestHTTPHookHeaderInterpolation(t *testing.T) {
	t.Parallel()
	s := newHookServer(t, func(w http.ResponseWriter, r *http.Request) {})
	f := newHook(t, config.Hook{
		Event: PreToolUse, URL: s.URL,
		Headers: map[string]string{
			"Authorization": "Bearer $HOOK_TOKEN",
			"X-Braced":      "${HOOK_TOKEN}-${REGION}",
			"X-Unlisted":    "[$LEAKY_SECRET]",
		},
		AllowedEnvVars: []string{"HOOK_TOKEN", "REGION"},
	}, map[string]string{"HOOK_TOKEN": "t0k3n", "REGION": "eu"})
	if _, err := f.check(t, toolCall(`{}`), intercept.Request); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, want := range map[string]string{"Authorization": "Bearer t0k3n", "X-Braced": "t0k3n-eu", "X-Unlisted": "[]"} {
		if got := s.headers.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}
