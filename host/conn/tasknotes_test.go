package conn

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/host/config"
)

// watchIDs is a TaskIDs and TaskWatcher that records, per outward id, the
// status notifications passed on.
type watchIDs struct {
	prefixIDs
	got map[string][]string // outward id: the params received
	off bool                // Watch returns nil (a caller that cannot be told)
}

func (w *watchIDs) Watch(_ context.Context, _ Requester, server, version, upstream, outward string) func(json.RawMessage) {
	if w.off {
		return nil
	}
	return func(p json.RawMessage) { w.got[outward] = append(w.got[outward], string(p)) }
}

// TestTaskStatusNotes: a notifications/tasks/status read from a server
// reaches the receiver of the task a call created (by the server's task
// id), until the task ends; one of a task no call created, one without a
// taskId, and all of them after the session was replaced, reach no one.
// On the old code no status notification was passed on at all.
func TestTaskStatusNotes(t *testing.T) {
	t.Parallel()
	note := func(params string) *jsonrpc.Request {
		return &jsonrpc.Request{Method: MethodTaskStatus, Params: json.RawMessage(params)}
	}
	create := func(c *Conn, ids TaskIDs, up string) string {
		out, flush := c.createTaskResult(context.Background(), ids, nil, "2025-11-25", []byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"`+up+`","status":"working"}}}`))
		if flush != nil {
			flush()
		}
		var r struct {
			Result struct {
				Task struct {
					TaskID string `json:"taskId"`
				} `json:"task"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		return r.Result.Task.TaskID
	}
	for _, tc := range []struct {
		name   string
		off    bool
		notes  []string
		reset  bool // the session was replaced before the notes
		want   map[string]int
		wantOK bool
	}{
		{name: "created", notes: []string{`{"taskId":"u1","status":"working"}`, `{"taskId":"u1","status":"completed"}`, `{"taskId":"u1","status":"completed"}`},
			want: map[string]int{"s/2025-11-25/u1": 2}},
		{name: "another task", notes: []string{`{"taskId":"u9","status":"working"}`}, want: map[string]int{}},
		{name: "no taskId", notes: []string{`{"status":"working"}`, `{"taskId":1}`, `[]`, `null`}, want: map[string]int{}},
		{name: "caller cannot be told", off: true, notes: []string{`{"taskId":"u1","status":"working"}`}, want: map[string]int{}},
		{name: "new session", reset: true, notes: []string{`{"taskId":"u1","status":"working"}`}, want: map[string]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &Conn{cfg: &config.Server{Name: "s", Transport: config.TransportStdio}, log: hclog.NewNullLogger()}
			ids := &watchIDs{got: map[string][]string{}, off: tc.off}
			if id := create(c, ids, "u1"); id != "s/2025-11-25/u1" {
				t.Fatalf("outward id %q", id)
			}
			if tc.reset {
				c.taskNotes.reset()
			}
			for _, n := range tc.notes {
				if out, changed := c.routeNote(note(n), nil); changed || out.(*jsonrpc.Request).Method != MethodTaskStatus {
					t.Errorf("routeNote changed the notification: %v", out)
				}
			}
			got := map[string]int{}
			for id, ps := range ids.got {
				got[id] = len(ps)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("passed on %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTaskNotesBounded: past maxTaskNotes, the oldest tasks are forgotten.
func TestTaskNotesBounded(t *testing.T) {
	t.Parallel()
	var tn taskNotes
	for i := range maxTaskNotes + 10 {
		tn.add(fmt.Sprint(i), func(json.RawMessage) {})
	}
	if len(tn.m) != maxTaskNotes {
		t.Errorf("%d tasks kept, want %d", len(tn.m), maxTaskNotes)
	}
	if tn.to("0", false) != nil || tn.to(fmt.Sprint(maxTaskNotes+9), false) == nil {
		t.Error("not the oldest forgotten")
	}
	for i := range 4 * maxTaskNotes { // (ended tasks: order stays bounded)
		id := fmt.Sprint("e", i)
		tn.add(id, func(json.RawMessage) {})
		tn.to(id, true)
	}
	if len(tn.order) > 2*maxTaskNotes+1 {
		t.Errorf("order holds %d ids", len(tn.order))
	}
}

// FuzzTaskStatusOf: any params (untrusted, from a server) are read without
// a panic, and a taskId read is the one JSON decodes.
func FuzzTaskStatusOf(f *testing.F) {
	for _, s := range []string{`{"taskId":"a","status":"working"}`, `{"taskId":"a\u0062"}`, `{"taskId":1}`, `[]`, `{"taskId":"a","taskId":"b"}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		id, _, ok := taskStatusOf(b)
		if !ok {
			return
		}
		var v struct {
			TaskID string `json:"taskId"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%q read as task %q, but not JSON: %v", b, id, err)
		}
		if v.TaskID != id {
			t.Fatalf("%q: taskId %q, JSON says %q", b, id, v.TaskID)
		}
	})
}

// TestTaskStatusBeforeItsTask: a status notification read before the
// CreateTaskResult of its task (another stream, say) is passed on when
// the task is created; a terminal one then ends the watch. One of another
// task is not, and the kept ones are bounded.
func TestTaskStatusBeforeItsTask(t *testing.T) {
	t.Parallel()
	c := &Conn{cfg: &config.Server{Name: "s", Transport: config.TransportStdio}, log: hclog.NewNullLogger()}
	ids := &watchIDs{got: map[string][]string{}}
	for _, p := range []string{`{"taskId":"u1","status":"working"}`, `{"taskId":"u2","status":"working"}`, `{"taskId":"u1","status":"completed"}`} {
		c.routeNote(&jsonrpc.Request{Method: MethodTaskStatus, Params: json.RawMessage(p)}, nil)
	}
	_, flush := c.createTaskResult(context.Background(), ids, nil, "2025-11-25", []byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"u1","status":"working"}}}`))
	if len(ids.got) != 0 || flush == nil {
		// (review57 finding 11: the old code passed them on before the
		// result was handed on.)
		t.Fatalf("passed on %v before the result was handed on (flush %v), want nothing yet", ids.got, flush != nil)
	}
	flush()
	if got := ids.got["s/2025-11-25/u1"]; len(got) != 2 || got[1] != `{"taskId":"u1","status":"completed"}` {
		t.Errorf("passed on %q, want u1's two notifications in order", got)
	}
	if len(ids.got) != 1 {
		t.Errorf("passed on %v, want u1's only", ids.got)
	}
	if c.taskNotes.to("u1", false) != nil {
		t.Error("u1 still watched after its terminal status")
	}
	for i := range 2 * maxEarlyNotes {
		c.taskNotes.keep(earlyNote{id: fmt.Sprint(i)})
	}
	if len(c.taskNotes.early) != maxEarlyNotes {
		t.Errorf("%d notifications kept, want %d", len(c.taskNotes.early), maxEarlyNotes)
	}
}
