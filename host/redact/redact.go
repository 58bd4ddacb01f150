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
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Mask replaces a secret.
const Mask = "[REDACTED]"

// value matches what follows a key and its separator: the mask itself (so
// that scrubbing twice changes nothing), a quoted string (up to its closing
// quote) or a bare word.
const value = `(\[REDACTED\]|\\"(?:[^\\\n]|\\[^"\n])*(?:\\")?|"(?:[^"\\\n]|\\.)*"?|'[^'\n]*'?|[^\s"',;&}\]\\]+)`

// keyed are secrets recognised by the name in front of them: the value (the
// last group, at the end of the match) is masked, the rest kept. numbersOK
// leaves plain integers alone.
var keyed = []struct {
	re        *regexp.Regexp
	numbersOK bool
}{
	// Header-like fields: Authorization: …, Cookie=…, "mcp-session-id": "…".
	// Authorization and cookie headers: the whole value, to the end of the
	// line or of the quoted string, whatever the scheme ("Token abc") and
	// however many cookies.
	{regexp.MustCompile(`(?i)(\b(?:proxy-)?authorization|set-cookie|\bcookie)(\\?"?\s*[:=]\s*(?:(?:bearer|basic|dpop)\s+)?)(\[REDACTED\]|\\"(?:[^\\\n]|\\[^"\n])*(?:\\")?|"(?:[^"\\\n]|\\.)*"?|[^\r\n"\\]+)`), false},
	{regexp.MustCompile(`(?i)(\bmcp-session-id|\bx-api-key)(\\?"?\s*[:=]\s*)` + value), false},
	// Bearer abc / Basic abc / DPoP abc anywhere, in any casing.
	{regexp.MustCompile(`(?i)(\b(?:bearer|basic|dpop)\s+)([A-Za-z0-9\-._~+/]+=*)`), false},
	// Credential fields in JSON, query strings, environment and key=value
	// text: any name ending in token, secret, password, passwd, api key,
	// credential(s), assertion, code_verifier or session id, e.g.
	// access_token, GITHUB_TOKEN, client_secret, DB_PASSWORD, x-api-key.
	{regexp.MustCompile(`(?i)(\b[A-Za-z0-9_.\-]*(?:token|secret|password|passwd|api[_\-]?key|credentials?|assertion|code_verifier|session[_\-]?id)\\?["']?\s*[:=]\s*)` + value), false},
	// An OAuth authorization code: code=… in a query string or key=value
	// text (no spaces around "=", so "code = Unavailable" in a gRPC status
	// survives) and "code": "…" in JSON (a string, so the number in a
	// JSON-RPC error object survives).
	{regexp.MustCompile(`(?i)((?:^|[?&;\s])code=)(\[REDACTED\]|[^\s"',;&}\]]+)`), true},
	{regexp.MustCompile(`(?i)("code"\s*:\s*)("(?:[^"\\\n]|\\.)*"?)`), true},
}

// secretKey matches the names of fields, arguments, environment variables
// and headers whose values are secrets. It is the one heuristic of
// mcphost: log fields (Args), the ask prompt's arguments and the values of
// imported entries (config.IsSecretName) all use it.
var secretKey = regexp.MustCompile(`(?i)(token|secret|passw(or)?d|pwd|passphrase|authorization|cookie|session[_-]?id|code_verifier|api[_-]?key|access[_-]?key|private[_-]?key|assertion|credential|(^|[_-])(key|pat)$)`)

// SecretName reports whether a field, key, argument, variable or header
// named name holds a secret by its name (access_token, client_secret,
// DB_PASSWORD, DB_PWD, apiKey, db_key, GITHUB_PAT, private_key,
// passphrase, Authorization, …): its value is masked whatever it looks
// like.
func SecretName(name string) bool { return secretKey.MatchString(name) }

// urlCredentials matches the password of user:password@ in a URL.
var urlCredentials = regexp.MustCompile(`(://[^/\s:@]+:)[^/\s@]+@`)

// String scrubs secrets from s. It is the one redactor for every text that
// comes from a server or plugin and reaches the user: log lines, error
// messages, stderr tails.
func String(s string) string {
	for _, p := range tokenPatterns {
		s = p.RE.ReplaceAllLiteralString(s, Mask)
	}
	s = urlCredentials.ReplaceAllString(s, "${1}"+Mask+"@")
	for _, k := range keyed {
		s = k.re.ReplaceAllStringFunc(s, func(m string) string {
			sub := k.re.FindStringSubmatch(m)
			v := sub[len(sub)-1]
			if v == Mask || v == `"`+Mask+`"` || v == `\"`+Mask+`\"` || (k.numbersOK && isNumber(v)) {
				return m
			}
			masked := Mask
			switch {
			case strings.HasPrefix(v, `\"`):
				masked = `\"` + Mask + `\"`
			case len(v) > 0 && (v[0] == '"' || v[0] == '\''):
				masked = v[:1] + Mask + v[:1]
			}
			return m[:len(m)-len(v)] + masked
		})
	}
	return s
}

// isNumber reports whether v is a plain integer (a status or exit code, a
// count), which is never a secret worth hiding.
func isNumber(v string) bool {
	v = strings.TrimPrefix(v, "-")
	if v == "" || len(v) > 6 {
		return false
	}
	for _, r := range v {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
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
			case nil, bool, int, int64, uint64, float64, time.Duration, time.Time:
			default:
				// Maps and slices parsed from a plugin's JSON log line, say:
				// their printed form is what the log shows.
				if s := fmt.Sprint(v); String(s) != s {
					out[i] = String(s)
				}
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

// Error returns err with its message scrubbed by String, for errors that may
// quote a server or plugin. errors.Is and errors.As still see the original
// chain. A nil err stays nil.
func Error(err error) error {
	if err == nil {
		return nil
	}
	return &scrubbed{msg: String(err.Error()), err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }
