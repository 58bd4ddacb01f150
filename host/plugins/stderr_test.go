package plugins_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/plugins"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// TestPluginStderrCanariesAreMasked: whatever a plugin writes to stderr (plain
// lines, JSON log lines, nested fields) reaches the host log only after the
// one redactor has masked the known token shapes and named secrets in it.
func TestPluginStderrCanariesAreMasked(t *testing.T) {
	t.Parallel()
	canaries := []string{
		"ghp_CANARYa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6",
		"CANARYopaque1",
		"sk-ant-api03-CANARYanthropicAAAABBBB",
		"xoxb-1234567890-CANARYslack",
		"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJDQU5BUlkifQ.CANARYsig",
		"CANARYnested",
		"hunter2",
	}
	script := `#!/bin/sh
echo 'plain line: token=ghp_CANARYa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6' >&2
echo '[ERROR] login failed with token=CANARYopaque1' >&2
echo '{"@level":"warn","@message":"calling the API with sk-ant-api03-CANARYanthropicAAAABBBB","@module":"leaky","slack":"xoxb-1234567890-CANARYslack","cfg":{"password":"CANARYnested"}}' >&2
echo '{"@level":"error","@message":"id eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJDQU5BUlkifQ.CANARYsig","@module":"leaky","dsn":"postgres://app:hunter2@db/x"}' >&2
echo 'rpc error: code = Unavailable desc = upstream gone' >&2
sleep 0.3
echo '1|1|tcp|10.0.0.1:1|grpc'
sleep 5
`
	path := filepath.Join(t.TempDir(), "leaky")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := plugins.FileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf syncbuf.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Trace})
	rt, err := plugins.New(&config.Config{Plugins: []*config.Plugin{{Name: "leaky", Path: path, SHA256: sum}}},
		&plugins.Options{Logger: log, StartTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.Info(context.Background(), "leaky"); err == nil {
		t.Fatal("a plugin announcing an off-machine address started")
	}
	out := buf.String()
	for _, c := range canaries {
		if strings.Contains(out, c) {
			t.Errorf("host log contains the canary %s:\n%s", c, out)
		}
	}
	for _, want := range []string{"plugin.leaky", "token=[REDACTED]", "code = Unavailable desc = upstream gone"} {
		if !strings.Contains(out, want) {
			t.Errorf("host log lacks %q:\n%s", want, out)
		}
	}
}
