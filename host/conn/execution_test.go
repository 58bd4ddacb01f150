package conn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/mcpmeta"
)

func TestHideExecution(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		changed  bool
		want     string // the tools, when changed
	}{
		{"moved", `{"tools":[{"name":"a","execution":{"taskSupport":"optional"}},{"name":"b"}]}`, true,
			`[{"name":"a","_meta":{"dev.mcphost/execution":{"taskSupport":"optional"}}},{"name":"b"}]`},
		{"beside _meta", `{"tools":[{"name":"a","_meta":{"x":1},"execution":{"taskSupport":"required"}}],"nextCursor":"c"}`, true,
			`[{"name":"a","_meta":{"x":1,"dev.mcphost/execution":{"taskSupport":"required"}}}]`},
		{"null _meta", `{"tools":[{"name":"a","_meta":null,"execution":{}}]}`, true,
			`[{"name":"a","_meta":{"dev.mcphost/execution":{}}}]`},
		{"no execution", `{"tools":[{"name":"a"}]}`, false, ""},
		// A server's own value for a gateway's member is dropped: only the
		// execution it gives is taken as its execution.
		{"gateway's member forged", `{"tools":[{"name":"a","_meta":{"x":1,"dev.mcphost/execution":{"taskSupport":"required"}}}]}`, true,
			`[{"name":"a","_meta":{"x":1}}]`},
		{"gateway's member forged, escaped", `{"tools":[{"name":"a","_meta":{"dev.mcphost\u002fexecution":{"taskSupport":"required"}}}]}`, true,
			`[{"name":"a"}]`},
		{"gateway's member forged beside execution", `{"tools":[{"name":"a","_meta":{"dev.mcphost/route":"1","dev.mcphost/execution":{"taskSupport":"required"}},"execution":{"taskSupport":"forbidden"}}]}`, true,
			`[{"name":"a","_meta":{"dev.mcphost/execution":{"taskSupport":"forbidden"}}}]`},
		{"only in a description", `{"tools":[{"name":"a","description":"\"execution\""}]}`, false, ""},
		{"not a tool list", `{"content":[{"type":"text","text":"\"execution\""}]}`, false, ""},
		{"tools not a list", `{"tools":{"execution":1}}`, false, ""},
		{"bad _meta", `{"tools":[{"name":"a","_meta":[1],"execution":{}}]}`, false, ""},
		{"not JSON", `{"tools":[{"execution"`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed := hideExecution(json.RawMessage(tc.in))
			if changed != tc.changed {
				t.Fatalf("changed %v, want %v (%s)", changed, tc.changed, out)
			}
			if !changed {
				if string(out) != tc.in {
					t.Errorf("unchanged result rewritten: %s", out)
				}
				return
			}
			var got struct{ Tools any }
			var want any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			json.Unmarshal([]byte(tc.want), &want)
			if !reflect.DeepEqual(got.Tools, want) {
				t.Errorf("tools %s, want %s", out, tc.want)
			}
		})
	}
}

// FuzzHideExecution: whatever a server sends, hideExecution returns it as
// it is or as valid JSON whose tools have no "execution" left.
func FuzzHideExecution(f *testing.F) {
	for _, s := range []string{`{"tools":[{"name":"a","execution":{"taskSupport":"optional"}}]}`,
		`{"tools":[{"name":"a","_meta":{"x":1},"execution":null}]}`, `{"tools":null}`, `"execution"`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, changed := hideExecution(data)
		if !changed {
			if string(out) != string(data) {
				t.Fatalf("unchanged but rewritten")
			}
			return
		}
		var got struct {
			Tools []map[string]json.RawMessage
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("changed into invalid JSON %s: %v", out, err)
		}
		for _, tool := range got.Tools {
			if _, ok := tool["execution"]; ok {
				var meta map[string]json.RawMessage
				if json.Unmarshal(tool["_meta"], &meta) == nil && meta[mcpmeta.ExecutionKey] != nil {
					t.Fatalf("execution left beside the moved one: %s", out)
				}
			}
		}
	})
}

// TestExecutionOfToolsListsOnly: on connections that route every message
// read (stdio, plugin, SSE, in-process: routeNote), only the response to a
// tools/list the go-sdk client wrote has its tools' "execution" moved; a
// tools/call's result is never decoded for it, whatever it holds.
func TestExecutionOfToolsListsOnly(t *testing.T) {
	c := &Conn{cfg: &config.Server{Name: "s", Transport: config.TransportStdio}}
	const listed = `{"tools":[{"name":"a","execution":{"taskSupport":"optional"}}]}`
	list, _ := jsonrpc.MakeID(float64(7))
	call, _ := jsonrpc.MakeID("c8")
	c.toolsLists.sent(&jsonrpc.Request{ID: list, Method: "tools/list"})
	c.toolsLists.sent(&jsonrpc.Request{ID: call, Method: "tools/call", Params: json.RawMessage(`{"name":"a"}`)})
	for _, tc := range []struct {
		name    string
		id      jsonrpc.ID
		changed bool
	}{
		{"a tools/call's result", call, false},
		{"the tools/list's", list, true},
		{"the tools/list's, again", list, false}, // (answered once)
	} {
		out, changed := c.routeNote(&jsonrpc.Response{ID: tc.id, Result: json.RawMessage(listed)}, nil)
		if changed != tc.changed {
			t.Errorf("%s: changed %v (%v), want %v", tc.name, changed, out, tc.changed)
		}
	}
}

// TestExecutionOfCachedToolsLists: a 2026-07-28 server whose tools/list
// result may be cached (ttlMs): the go-sdk client caches it per cursor,
// whatever context listed it first, and serves the cached copy to the
// next; the tools' "execution" is kept in every copy (the request's
// Mcp-Method header says it is a tools/list, not only a context of
// ListingTools), over JSON and event-stream responses.
func TestExecutionOfCachedToolsLists(t *testing.T) {
	t.Parallel()
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				var req struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				body, _ := io.ReadAll(r.Body)
				if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				var result string
				switch req.Method {
				case "server/discover":
					result = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"1"}}}`
				case "tools/list":
					result = `{"resultType":"complete","ttlMs":60000,"tools":[{"name":"job","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`
				default:
					result = `{"resultType":"complete"}`
				}
				out := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`
				if sse {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "event: message\ndata: %s\n\n", out)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, out)
			}))
			t.Cleanup(hs.Close)
			m := NewManager([]*config.Server{{Name: "h", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}}, nil)
			t.Cleanup(func() { m.Close() })
			ctx := context.Background()
			err := m.Do(ctx, "h", func(ctx context.Context, cs *mcp.ClientSession) error {
				for i, lctx := range []context.Context{ctx, ListingTools(ctx)} { // (unmarked first: cached)
					r, err := cs.ListTools(lctx, nil)
					if err != nil {
						return err
					}
					if len(r.Tools) != 1 || r.Tools[0].Meta[mcpmeta.ExecutionKey] == nil {
						t.Errorf("list %d: %+v, want the tool's execution kept", i, r.Tools)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
