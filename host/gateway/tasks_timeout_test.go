package gateway

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/gateway/wire"
)

// TestTasksRequestTimeout: a tasks request whose server does not answer is
// answered for with an error after TasksRequestTimeout (a minute), not
// before, and the server's request is cancelled then; tasks/result, which
// waits for the task's end, is not bounded by it. (The upstream is a
// function of the test's: the limit is the gateway's own, and a real
// server's connection would leave the bubble's time.)
func TestTasksRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		method, version string
		bounded         bool
	}{
		{"tasks/get", "2026-07-28", true},
		{"tasks/update", "2026-07-28", true},
		{"tasks/cancel", "2026-07-28", true},
		{"tasks/get", "2025-11-25", true},
		{"tasks/cancel", "2025-11-25", true},
		{"tasks/result", "2025-11-25", false},
	} {
		t.Run(tc.version+" "+tc.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := &Gateway{keys: keysOf(t, sessionKey(t)), log: hclog.NewNullLogger()}
				sent := make(chan struct{}, 1)
				g.tasks.request = func(ctx context.Context, server, version, method, name string, params, caps []byte) ([]byte, error) {
					sent <- struct{}{}
					<-ctx.Done() // (a server that never answers)
					return nil, ctx.Err()
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				id := (*taskIDs)(g).Outward(ctx, "srv", tc.version, "up-1")
				req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": tc.method, "params": map[string]any{"taskId": id}})
				var m wire.Message
				if err := wire.Parse(&m, req); err != nil {
					t.Fatal(err)
				}
				answered := make(chan []byte, 1)
				go func() {
					answered <- g.ServeTasks(ctx, &m, tc.version, []byte(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`))
				}()
				<-sent
				start := time.Now()
				time.Sleep(TasksRequestTimeout - time.Millisecond)
				synctest.Wait()
				select {
				case resp := <-answered:
					t.Fatalf("answered after %v, before the limit: %s", time.Since(start), resp)
				default:
				}
				time.Sleep(2 * time.Millisecond)
				synctest.Wait()
				select {
				case resp := <-answered:
					if !tc.bounded {
						t.Fatalf("%s answered at the limit: %s", tc.method, resp)
					}
					var r struct {
						Error *struct{ Code int } `json:"error"`
					}
					if json.Unmarshal(resp, &r) != nil || r.Error == nil || r.Error.Code != -32603 {
						t.Errorf("answer at the limit: %s, want an internal error", resp)
					}
				default:
					if tc.bounded {
						t.Fatalf("no answer %v after the request", time.Since(start))
					}
					cancel() // (tasks/result waits for the task: its client ends it)
					<-answered
				}
			})
		})
	}
}
