package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/internal/jsonrpcmsg"
	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// A tool's "execution" (2025-11-25 and 2026-07-28: {"taskSupport":
// "forbidden"|"optional"|"required"}) is a member the go-sdk's Tool does
// not have: decoding a tools/list result drops it. So, as an elicitation's
// schema is (schema.go), it is moved out of the go-sdk's sight when the
// result is read, into the tool's _meta under mcpmeta.ExecutionKey, where
// the registry finds it (registry.Tool.Execution). Only what is read for the
// go-sdk client is looked at — never the raw lane's responses (the relay's
// tools/call) — and only the response to a tools/list holding `"execution"`:
//   - on stdio, plugin, SSE and in-process connections the responses to the
//     tools/list requests the go-sdk client wrote (toolsLists, routeNote):
//     no other result (a tools/call's, a resources/read's) is decoded;
//   - over streamable HTTP the responses, JSON or event stream, of a POST
//     of tools/list: its Mcp-Method header says so (2026-07-28 sessions,
//     whatever the context: the go-sdk caches their lists, so a list read
//     under any context may be the one served later), or a context of
//     ListingTools (earlier versions send no such header).

// listingKey marks a context under which tools/list is sent.
type listingKey struct{}

// ListingTools returns ctx marked as that of a tools/list: over streamable
// HTTP, its response is read for the tools' "execution" (see above).
func ListingTools(ctx context.Context) context.Context {
	return context.WithValue(ctx, listingKey{}, true)
}

func listingTools(ctx context.Context) bool { return ctx.Value(listingKey{}) != nil }

// listingRequest reports whether req, an HTTP request of the go-sdk client,
// is a POST of tools/list (see above).
func listingRequest(req *http.Request) bool {
	return req.Method == http.MethodPost && (req.Header.Get("Mcp-Method") == "tools/list" || listingTools(req.Context()))
}

// maxToolsLists bounds toolsLists: ids of lists never answered (the
// connection ended) are forgotten past it.
const maxToolsLists = 64

// toolsLists are the ids of the tools/list requests the go-sdk client wrote
// on a connection, until their responses are read.
type toolsLists struct {
	mu  sync.Mutex
	ids map[any]struct{}
}

// sent notes msg, a message the go-sdk client writes, if it is a tools/list.
func (l *toolsLists) sent(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "tools/list" || !req.IsCall() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ids == nil || len(l.ids) >= maxToolsLists {
		l.ids = map[any]struct{}{}
	}
	l.ids[req.ID.Raw()] = struct{}{}
}

// answered reports whether resp answers a tools/list sent (and forgets it).
func (l *toolsLists) answered(resp *jsonrpc.Response) bool {
	if !resp.ID.IsValid() {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.ids[resp.ID.Raw()]
	if ok {
		delete(l.ids, resp.ID.Raw())
	}
	return ok
}

// hideExecution returns a tools/list result with each tool's "execution"
// moved into its _meta[mcpmeta.ExecutionKey], and any member of the
// gateway's own (mcpmeta.IsGateways) the server put in a tool's _meta
// removed — however it spelled it: the key is decoded — so that a server
// cannot pass a value for one, its execution say (changed: new JSON). Any
// other result, or one it cannot read, is returned as it is. (It is run on
// the responses to tools/list only, each decoded: lists are read seldom.)
func hideExecution(result json.RawMessage) (out json.RawMessage, changed bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil {
		return result, false
	}
	var tools []map[string]json.RawMessage
	if raw, ok := obj["tools"]; !ok || json.Unmarshal(raw, &tools) != nil {
		return result, false
	}
	for _, t := range tools {
		if t == nil {
			continue
		}
		exec, hasExec := t["execution"]
		var meta map[string]json.RawMessage
		if raw, found := t["_meta"]; found && string(raw) != "null" {
			if json.Unmarshal(raw, &meta) != nil {
				continue // (the go-sdk refuses it)
			}
		}
		forged := false
		for k := range meta {
			if mcpmeta.IsGateways(k) {
				delete(meta, k)
				forged = true
			}
		}
		if !hasExec && !forged {
			continue
		}
		if hasExec {
			if meta == nil {
				meta = map[string]json.RawMessage{}
			}
			delete(t, "execution")
			meta[mcpmeta.ExecutionKey] = exec
		}
		changed = true
		if len(meta) == 0 {
			delete(t, "_meta")
			continue
		}
		b, err := json.Marshal(meta)
		if err != nil {
			return result, false
		}
		t["_meta"] = b
	}
	if !changed {
		return result, false
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return result, false
	}
	obj["tools"] = b
	if out, err = json.Marshal(obj); err != nil {
		return result, false
	}
	return out, true
}

// responseExecution is hideExecution of a response message read for the
// go-sdk client.
func responseExecution(resp *jsonrpc.Response) (jsonrpc.Message, bool) {
	if resp.Error != nil || len(resp.Result) == 0 {
		return resp, false
	}
	res, changed := hideExecution(resp.Result)
	if !changed {
		return resp, false
	}
	cp := *resp
	cp.Result = res
	return &cp, true
}

// executionEvent is hideExecution of a message's data (an event of a
// tools/list's stream, or its JSON body): the new data, or nil to keep it.
func executionEvent(data []byte) []byte {
	msg, err := jsonrpcmsg.Decode(data)
	if err != nil {
		return nil // the go-sdk reports it
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return nil
	}
	return changedData(responseExecution(resp))
}

// executionBody replaces a tools/list's JSON response body by one with its
// tools' "execution" moved (executionEvent), reading at most max bytes of it
// (0: no limit): a longer body is passed on as read, for the go-sdk to
// refuse or take.
func executionBody(resp *http.Response, max int) {
	r := io.Reader(resp.Body)
	if max > 0 {
		r = io.LimitReader(resp.Body, int64(max)+1)
	}
	data, err := io.ReadAll(r)
	if err != nil || max > 0 && len(data) > max {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), resp.Body), resp.Body}
		return
	}
	body := resp.Body
	if out := executionEvent(bytes.TrimSpace(data)); out != nil {
		data = out
		resp.ContentLength = int64(len(data))
		resp.Header.Del("Content-Length")
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{bytes.NewReader(data), body}
}
