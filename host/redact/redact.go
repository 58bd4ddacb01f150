// Package redact keeps secrets out of logs: it scrubs bearer tokens,
// credential-looking fields and auth headers from log messages and values,
// and wraps an hclog.Logger so that everything logged through it (including
// the lines go-plugin forwards from a plugin's untrusted stderr) is scrubbed.
package redact

import (
	"fmt"
	"io"
	"log"
	"regexp"

	"github.com/hashicorp/go-hclog"
)

// Mask replaces a secret.
const Mask = "[REDACTED]"

var patterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Authorization: Bearer abc / Basic abc, in any casing or quoting.
	{regexp.MustCompile(`(?i)\b(bearer|basic|dpop)(\s+)[A-Za-z0-9\-._~+/]+=*`), "${1}${2}" + Mask},
	// header-like fields: Authorization: …, Cookie=…, "mcp-session-id": "…"
	{regexp.MustCompile(`(?i)((?:proxy-)?authorization|set-cookie|cookie|mcp-session-id|x-api-key)("?\s*[:=]\s*"?)(?:bearer\s+|basic\s+)?[^"\s,;&}]+`), "${1}${2}" + Mask},
	// credential fields in JSON, query strings and key=value text.
	{regexp.MustCompile(`(?i)((?:access|refresh|id)_token|client_secret|code_verifier|assertion|password|passwd|api[_-]?key|secret|(?:^|[?&\s"])code)("?\s*[:=]\s*"?)[^"\s,;&}]+`), "${1}${2}" + Mask},
}

// secretKey matches the names of log fields whose values are secrets.
var secretKey = regexp.MustCompile(`(?i)(token|secret|password|passwd|authorization|cookie|session[_-]?id|code_verifier|api[_-]?key|assertion|credential)`)

// String scrubs secrets from s.
func String(s string) string {
	for _, p := range patterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// Args scrubs a list of key/value log arguments: values of secret-named keys
// are masked, every other string (or error, or Stringer) value is scrubbed.
func Args(args []any) []any {
	out := make([]any, len(args))
	for i := 0; i < len(args); i++ {
		out[i] = args[i]
		if i%2 == 1 {
			if k, ok := args[i-1].(string); ok && secretKey.MatchString(k) {
				out[i] = Mask
				continue
			}
			switch v := args[i].(type) {
			case string:
				out[i] = String(v)
			case error:
				out[i] = String(v.Error())
			case fmt.Stringer:
				out[i] = String(v.String())
			}
		}
	}
	return out
}

// Logger wraps l so that every message and argument is scrubbed. Named, With
// and ResetNamed return wrapped loggers too.
func Logger(l hclog.Logger) hclog.Logger { return &logger{Logger: l} }

type logger struct{ hclog.Logger }

func (l *logger) Log(level hclog.Level, msg string, args ...any) {
	l.Logger.Log(level, String(msg), Args(args)...)
}
func (l *logger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l *logger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l *logger) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l *logger) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l *logger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

func (l *logger) With(args ...any) hclog.Logger { return &logger{l.Logger.With(Args(args)...)} }
func (l *logger) Named(name string) hclog.Logger {
	return &logger{l.Logger.Named(name)}
}
func (l *logger) ResetNamed(name string) hclog.Logger {
	return &logger{l.Logger.ResetNamed(name)}
}

// StandardLogger and StandardWriter scrub what goes through them too.
func (l *logger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(l.StandardWriter(opts), "", 0)
}
func (l *logger) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	return writer{l.Logger.StandardWriter(opts)}
}

type writer struct{ w io.Writer }

func (w writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
