package sdk_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/mcphost/mcphost/sdk"
	"github.com/mcphost/mcphost/sdk/sdktest"
)

// dataSocketTransport dispenses the echo transport with a data socket
// directory, as the host does for a real plugin process. (Not parallel: the
// plugin side reads the directory from the environment.)
func dataSocketTransport(t *testing.T, hostDir string) (sdk.Transport, string) {
	dir := t.TempDir()
	t.Setenv(plugin.EnvUnixSocketDir, dir)
	tr := sdktest.Transport(t, echoOpts)
	if hostDir == "" {
		hostDir = dir
	}
	tr.(sdk.DataSocketSetter).SetDataSocketDir(hostDir)
	return tr, dir
}

func TestTransportOverDataSocket(t *testing.T) {
	tr, dir := dataSocketTransport(t, "")
	ctx := context.Background()
	conn, err := tr.Open(ctx, &sdk.OpenRequest{ServerName: "s", URL: "ws://ok", Headers: map[string]string{"X-Test": "d"}})
	if err != nil {
		t.Fatal(err)
	}
	socks, _ := filepath.Glob(filepath.Join(dir, "data-*"))
	if len(socks) != 1 {
		t.Fatalf("data sockets in the host's directory: %v", socks)
	}
	big := strings.Repeat("x", 1<<20)
	for _, msg := range []string{`{"jsonrpc":"2.0","id":1}`, big} {
		if err := conn.Send(ctx, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		got, err := conn.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "s|d:"+msg {
			t.Errorf("got %.60q", got)
		}
	}
	conn.Send(ctx, []byte("hang up"))
	_, err = conn.Recv(ctx)
	var te *sdk.TransportError
	if !errors.As(err, &te) || te.Code != sdk.CodeTerminal {
		t.Errorf("after hang-up: %v (the error must still be classified)", err)
	}
	conn.Close()

	// A connection to the socket without the token is dropped.
	c, err := net.Dial("unix", socks[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tok := make([]byte, 32)
	rand.Read(tok)
	c.Write(tok)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("a connection with a forged token got %v, want it closed", err)
	}
}

func TestDataSocketOutsideTheHostDirectoryIsRefused(t *testing.T) {
	other := t.TempDir()
	tr, _ := dataSocketTransport(t, other)
	_, err := tr.Open(context.Background(), &sdk.OpenRequest{URL: "ws://ok"})
	if err == nil || !strings.Contains(err.Error(), "outside the host's directory") {
		t.Fatalf("err = %v", err)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("something was created in %s", other)
	}
}
