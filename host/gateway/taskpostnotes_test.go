package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// streamPost posts c's request of method with params on its session and
// returns the messages of the response as they are read (the data of each
// event of an event stream, or the JSON body), closed at its end.
func streamPost(t *testing.T, c *httpClient2025, method string, params map[string]any) <-chan []byte {
	t.Helper()
	c.n++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.n, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Mcp-Protocol-Version", oldProtocol)
	out := make(chan []byte, 64)
	done := make(chan struct{})
	go func() { // ends with the response (cleanup cancels it)
		defer close(done)
		defer close(out)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s: %v", method, err)
			return
		}
		defer resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			body, _ := io.ReadAll(resp.Body)
			out <- body
			return
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
				out <- bytes.Clone(data)
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return out
}

// TestTaskStatusOnPollingPost: a 2025-11-25 HTTP client that opened no
// standalone stream (GET), polling (tasks/get) or awaiting (tasks/result,
// of a long task: the server holds the result until released) the task its
// call created, gets the statuses the server sends meanwhile on that
// request's own stream, under the gateway's id of the task, before the
// response, and no status of another task (up-other); another session of
// the gateway gets nothing. A client with a GET gets them there, as
// before, and only the response on the POST. On the old code the client
// without a GET got no status at all (its POST was answered with the
// response alone). Through another replica than the one holding the
// GET, the status goes on that GET (the shared state says where one is
// open), not on the POST.
func TestTaskStatusOnPollingPost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method string
		get    bool // the creator opened a standalone stream (on replica a)
		onB    bool // the tasks request goes to replica b (the task was created through a)
	}{
		{"tasks/result", false, false},
		{"tasks/get", false, false},
		{"tasks/result", true, false},
		{"tasks/get", true, false},
		{"tasks/result", false, true},
		{"tasks/result", true, true}, // (b writes nothing on the POST: a holds the GET)
	} {
		name := tc.method + ", no GET"
		if tc.get {
			name = tc.method + ", GET"
		}
		if tc.onB {
			name += ", on another replica"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			up, url := newTasksUpstream(t, oldProtocol)
			gate := make(chan struct{})
			up.notes, up.resultNotes, up.resultGate = true, true, gate
			released := false
			release := func() {
				if !released {
					released = true
					close(gate)
				}
			}
			t.Cleanup(release)
			st, err := state.NewLocal(nil, "")
			if err != nil {
				t.Fatal(err)
			}
			servers := []*config.Server{{Name: "t", Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second}}
			k := sealbox.Random()
			p := ptServe(t, ptOptions{servers: servers, gopts: &gateway.Options{Keys: k, State: st}})
			if len(p.problems) > 0 {
				t.Fatalf("sync: %v", p.problems)
			}
			postURL := p.url
			if tc.onB {
				postURL = ptServe(t, ptOptions{servers: servers, gopts: &gateway.Options{Keys: k, State: st}}).url
			}
			var creator *httpClient2025
			var creatorGET *httpNotesClient
			if tc.get {
				creatorGET = newHTTPNotesClient(t, p.url, p.url)
				creator = creatorGET.httpClient2025
			} else {
				creator = newHTTPClient2025(t, p.url)
			}
			other := newHTTPNotesClient(t, p.url, p.url)
			res := creator.call(t, "tools/call", map[string]any{"name": "mcp__t__echo", "arguments": map[string]any{"message": "hi"}, "task": map[string]any{"ttl": 60000}})
			task, _ := res.Result["task"].(map[string]any)
			id, _ := task["taskId"].(string)
			if !strings.HasPrefix(id, "mcpt-") {
				t.Fatalf("tools/call: %+v %+v, want a task", res.Result, res.Error)
			}
			creator.url = postURL
			msgs := streamPost(t, creator, tc.method, map[string]any{"taskId": id})
			var onPost []statusNote
			var resp *rpcResponse
			read := func(b []byte) {
				if bytes.Contains(b, []byte("up-")) {
					t.Errorf("an upstream task id reached the client: %s", b)
				}
				var n statusNote
				if json.Unmarshal(b, &n) == nil && n.Method == "notifications/tasks/status" {
					if resp != nil {
						t.Errorf("a status after the response: %s", b)
					}
					onPost = append(onPost, n)
					return
				}
				var r rpcResponse
				if err := json.Unmarshal(b, &r); err != nil {
					t.Fatalf("%s: %q: %v", tc.method, b, err)
				}
				resp = &r
			}
			if !tc.get {
				// The status comes while the server still holds the
				// result (tasks/result).
				select {
				case b := <-msgs:
					read(b)
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: nothing on the POST's stream", tc.method)
				}
				if len(onPost) != 1 {
					t.Fatalf("%s: read %+v first, want the task's status", tc.method, resp)
				}
			}
			release()
			for b := range msgs {
				read(b)
			}
			if resp == nil || resp.Error != nil || resp.Result == nil {
				t.Fatalf("%s: response %+v, want a result", tc.method, resp)
			}
			if tc.get {
				if len(onPost) != 0 {
					t.Errorf("statuses on the POST of a client with a GET: %+v", onPost)
				}
				if got := creatorGET.statusNotes(t, 5*time.Second); len(got) != 1 || got[0].Params["taskId"] != id {
					t.Errorf("the GET got %+v, want one status of %s", got, id)
				}
			} else {
				if len(onPost) != 1 {
					t.Fatalf("the POST's stream got %d statuses (%+v), want 1", len(onPost), onPost)
				}
				n := onPost[0].Params
				rt, _ := n["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"].(map[string]any)
				if n["taskId"] != id || rt["taskId"] != id || n["status"] != "working" || n["statusMessage"] != "half way" {
					t.Errorf("the POST's stream got %+v, want the upstream's status under %s", n, id)
				}
			}
			if got := other.statusNotes(t, 300*time.Millisecond); len(got) != 0 {
				t.Errorf("another session got %+v, want nothing", got)
			}
		})
	}
}
