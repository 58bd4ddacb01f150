// Package headershelper is the headers-helper plugin. For a server it runs the
// configured command (argv, no shell) with MCP_SERVER_NAME and MCP_SERVER_URL
// in its environment, and reads a JSON object of string headers from its
// standard output. The command gets 10 seconds; a non-zero exit, output that
// is not such an object, or a timeout is reported as a diagnostic naming the
// server and the command, with what it wrote to stderr.
package headershelper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/sdk"
)

// Limits on one run of a helper.
const (
	Timeout   = 10 * time.Second
	MaxStdout = 1 << 20
	MaxStderr = 4 << 10
)

// Info describes the plugin.
var Info = sdk.Info{
	Name:    "headers-helper",
	Version: "1.0.0",
	Headers: &sdk.Component{
		Name:        "command",
		Description: "runs a command that prints a JSON object of headers",
		Config: []sdk.Attribute{
			{Name: "command", Type: sdk.TypeListOfString, Required: true, Description: "the helper's argv"},
		},
	},
}

// Main serves the plugin.
func Main() int {
	log := sdk.Logger()
	if err := sdk.Serve(&sdk.ServeOpts{Info: Info, Headers: &Helper{Log: log}, Logger: log}); err != nil {
		log.Error("cannot serve", "error", err)
		return 1
	}
	return 0
}

// Helper runs header helper commands.
type Helper struct {
	// Log receives the helper's logs. OPTIONAL.
	Log hclog.Logger
	// Timeout overrides Timeout (for tests). OPTIONAL.
	Timeout time.Duration
}

var _ sdk.Headers = (*Helper)(nil)

type config struct {
	Command []string `json:"command"`
}

// GetHeaders runs the server's helper.
func (h *Helper) GetHeaders(ctx context.Context, req *sdk.HeadersRequest) (*sdk.HeadersResponse, error) {
	var cfg config
	if diags := sdk.DecodeConfig(req.Config, &cfg); diags.HasErrors() {
		return &sdk.HeadersResponse{Diagnostics: diags}, nil
	}
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return fail("command", "No headers helper command", "server %q has no headers_helper command", req.ServerName), nil
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.Command[0], cfg.Command[1:]...)
	cmd.Env = append(os.Environ(), "MCP_SERVER_NAME="+req.ServerName, "MCP_SERVER_URL="+req.ServerURL)
	// Its own process group, so a timeout kills whatever it started too, and
	// a grandchild holding the pipes cannot make the plugin hang.
	ownGroup(cmd)
	cmd.WaitDelay = time.Second
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = MaxStdout, MaxStderr
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	helper := strings.Join(cfg.Command, " ")
	err := cmd.Run()
	tail := strings.TrimSpace(stderr.String())
	withStderr := func(msg string) string {
		if tail != "" {
			return msg + "; stderr: " + tail
		}
		return msg
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fail("command", "Headers helper timed out", "%s", withStderr(fmt.Sprintf("the headers helper %q for server %q did not finish within %s", helper, req.ServerName, timeout))), nil
	case err != nil:
		return fail("command", "Headers helper failed", "%s", withStderr(fmt.Sprintf("the headers helper %q for server %q failed: %v", helper, req.ServerName, err))), nil
	case stdout.over:
		return fail("command", "Headers helper output too large", "the headers helper %q for server %q wrote more than %d bytes", helper, req.ServerName, MaxStdout), nil
	}
	headers, msg := parseHeaders(stdout.Bytes())
	if msg != "" {
		return fail("command", "Invalid headers helper output", "%s", withStderr(fmt.Sprintf("the headers helper %q for server %q %s", helper, req.ServerName, msg))), nil
	}
	if h.Log != nil {
		names := make([]string, 0, len(headers))
		for k := range headers {
			names = append(names, k) // names only: values are secrets
		}
		h.Log.Debug("headers helper ran", "server", req.ServerName, "headers", strings.Join(names, ","))
	}
	return &sdk.HeadersResponse{Headers: headers}, nil
}

// parseHeaders reads a JSON object whose values are all strings; msg says
// what is wrong otherwise.
func parseHeaders(out []byte) (map[string]string, string) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, "did not print a JSON object of headers, e.g. {\"Authorization\": \"Bearer …\"}"
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "printed something after the JSON object"
	}
	headers := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Sprintf("printed a non-string value for header %q", k)
		}
		if k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(s, "\r\n") {
			return nil, fmt.Sprintf("printed an invalid header %q", k)
		}
		headers[k] = s
	}
	return headers, ""
}

func fail(attr, summary, format string, args ...any) *sdk.HeadersResponse {
	return &sdk.HeadersResponse{Diagnostics: sdk.Diagnostics{sdk.Errorf(attr, summary, format, args...)}}
}

// limitedBuffer keeps at most max bytes and notes whether more came. It
// holds its bytes.Buffer rather than embedding it: an embedded one's
// ReadFrom, which io.Copy (and so os/exec) prefers to Write, would fill it
// past max.
type limitedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

// Bytes returns what was kept.
func (b *limitedBuffer) Bytes() []byte { return b.buf.Bytes() }

// String returns what was kept, as a string.
func (b *limitedBuffer) String() string { return b.buf.String() }
