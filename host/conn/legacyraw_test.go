package conn

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// A server that speaks only NewProtocol refuses the second session: the
// calls of 2025-11-25 clients that can be asked are relayed on the first
// session from then on, as with legacy_session = false, instead of every
// one taking the go-sdk path.
func TestRawAfterSecondSessionRefused(t *testing.T) {
	srv := demoserver.New(&demoserver.Options{Name: "new-only", Passthrough: true})
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	// (A hand-written front: no go-sdk server can be told to answer an
	// initialize of an earlier version with NewProtocol.)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if r.Header.Get("Mcp-Protocol-Version") < NewProtocol {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "initialize" {
				http.Error(w, "no", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"new-only","version":"1"}}}`, req.ID, NewProtocol)
			return
		}
		stateless.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	for _, legacy := range []bool{true, false} {
		t.Run(fmt.Sprint("legacy_session=", legacy), func(t *testing.T) {
			cfg := &config.Server{Name: "n", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second, LegacySession: new(legacy)}
			m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps})
			t.Cleanup(func() { m.Close() })
			ctx := context.Background()
			if _, err := m.Call(ctx, "n", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}, &CallOptions{ClientVersion: LegacyProtocol, Requester: newAnswerer("a", "")}); err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				_, handled, err := m.CallRaw(ctx, "n", RawCall{Tool: "echo", Args: []byte(`{"message":"x"}`), ProtocolVersion: LegacyProtocol, Gen: m.Generation(ctx, "n"), Requester: newAnswerer("a", ""), Asks: true})
				if err != nil || !handled {
					t.Fatalf("raw call %d: handled=%v err=%v, want relayed", i, handled, err)
				}
			}
		})
	}
}
