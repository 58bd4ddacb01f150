package hook

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
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
		{"404 is non-blocking", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
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
	s := newHookServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) })
	f := newHook(t, config.Hook{Event: PreToolUse, URL: s.URL}, nil)
	if _, err := f.check(t, toolCall(`{}`), intercept.Request); err != nil {
		t.Fatal(err)
	}
	if logs := f.logs.String(); !strings.Contains(logs, "[WARN]") || !strings.Contains(logs, "HTTP status 403") {
		t.Errorf("logs:\n%s", logs)
	}
}

// TestHTTPHookServiceDownFails: a 5xx (the policy service or the load
// balancer in front of it is down) and a 3xx (never followed) are
// failures, like a refused connection: the engine fails them closed
// (review 36a M1, M3).
func TestHTTPHookServiceDownFails(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusFound, http.StatusTemporaryRedirect} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			s := newHookServer(t, func(w http.ResponseWriter, r *http.Request) {
				if status/100 == 3 {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(status)
			})
			f := newHook(t, config.Hook{Event: PreToolUse, URL: s.URL}, nil)
			_, err := f.check(t, toolCall(`{}`), intercept.Request)
			var he *Error
			if !errors.As(err, &he) || !errors.Is(err, ErrCannotRun) {
				t.Fatalf("HTTP %d: err = %v, want a *hook.Error matching ErrCannotRun", status, err)
			}
		})
	}
}

// TestHTTPHookNoRedirect: a redirect to another host is not followed, so
// the hook's headers (a secret from allowed_env_vars) and the tool input
// never reach it (review 36a M3); with a client passed in too.
func TestHTTPHookNoRedirect(t *testing.T) {
	t.Parallel()
	for _, own := range []bool{false, true} {
		t.Run(strconv.FormatBool(own), func(t *testing.T) {
			t.Parallel()
			var hit sync.Once
			reached := make(chan struct{})
			other := newHookServer(t, func(w http.ResponseWriter, r *http.Request) { hit.Do(func() { close(reached) }) })
			s := newHookServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
			})
			h := config.Hook{Event: PreToolUse, URL: s.URL, Dir: t.TempDir(), Headers: map[string]string{"X-Api-Key": "$KEY"}, AllowedEnvVars: []string{"KEY"}}
			r, err := newRunner(&h, Options{LookupEnv: hostEnv(map[string]string{"KEY": "s3cret"}), Client: func() *http.Client {
				if own {
					return &http.Client{}
				}
				return nil
			}()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Check(t.Context(), toolCall(`{"password":"hunter2"}`), intercept.Request); !errors.Is(err, ErrCannotRun) {
				t.Errorf("err = %v, want ErrCannotRun", err)
			}
			select {
			case <-reached:
				t.Error("the redirect was followed: the other host got the headers and the input")
			default:
			}
		})
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
